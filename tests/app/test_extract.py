"""Extraction into the inbox: new daily-note text goes to a program (here a small script, no model), whose
proposed facts land in items.json as ``proposed``; where each note stopped is kept, and a bad answer changes
nothing. Real files and git throughout; the answer-reading rules also as values.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.e2e import git
from helpers.twoway import SARAH, SARAH_DIR, TODAY, Env

from vaultsync import config as configmod
from vaultsync.app.extract import extract
from vaultsync.core.extract import AnswerError, read_answer
from vaultsync.model import ExitCode
from vaultsync.state.extracted import Mark, dump_marks, new_text, read_marks

SCRIPT = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
pathlib.Path(sys.argv[2]).write_text(json.dumps(payload))
sys.stdout.write(pathlib.Path(sys.argv[1]).read_text())
"""
NOTE = "memory/2026-12-01.md"


def configure(env: Env, tmp_path: Path, answer: object) -> tuple[Path, Path]:
    """Point ``[extract] command`` at a script that records what it was given and prints ``answer``."""
    script, answer_file, seen = tmp_path / "propose.py", tmp_path / "answer.json", tmp_path / "seen.json"
    script.write_text(SCRIPT)
    answer_file.write_text(answer if isinstance(answer, str) else json.dumps(answer))
    command = f"{sys.executable} {script} {answer_file} {seen}"
    env.config_path.write_text(configmod.dumps(replace(env.cfg, extract=configmod.Extract(command=command))))
    env.cfg = configmod.load(env.config_path)
    return answer_file, seen


def line_of(env: Env, note: str, words: str) -> int:
    lines = (env.workspace / note).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if words in line)


def proposal(env: Env, **fields: Any) -> dict[str, Any]:
    base = {"entity": SARAH, "fact": "Sarah Chen presents the readout deck", "category": "work"}
    return base | {"note": NOTE, "source_line": line_of(env, NOTE, "readout deck")} | fields


def test_proposals_land_in_the_inbox_and_the_next_run_reads_only_new_text(env: Env, tmp_path: Path) -> None:
    new = {"entity": "areas/people/nadia", "fact": "Nadia books the readout room", "new_entity": True}
    answer_file, seen = configure(env, tmp_path, [proposal(env), proposal(env, **new)])
    head = git(env.vault, "rev-parse", "HEAD")
    result = extract(env.cfg, today=TODAY)
    assert result.exit_code is ExitCode.CLEAN and not result.rejected
    given = json.loads(seen.read_text())
    assert [n["note"] for n in given["notes"]] == [f"memory/2026-11-{d}.md" for d in (27, 28, 29, 30)] + [NOTE]
    assert given["notes"][-1]["first_line"] == 1 and "readout deck" in given["notes"][-1]["text"]
    sarah = next(e for e in given["entities"] if e["entity"] == SARAH)
    assert sarah["name"] == "Sarah Chen" and isinstance(sarah["aliases"], list)

    added = env.fact(SARAH, "sarah-chen-007")  # the entity's own pattern, one past its highest id
    line = line_of(env, NOTE, "readout deck")
    assert added == {
        "id": "sarah-chen-007",
        "fact": "Sarah Chen presents the readout deck",
        "category": "work",
        "timestamp": "2026-12-01",
        "source": f"{NOTE}:{line}",
        "status": "proposed",
    }
    assert env.facts("areas/people/nadia")[0]["fact"] == "Nadia books the readout room"
    assert result.ids == ["sarah-chen-007", "nadia-001"]
    assert "status: proposed" in (env.vault / SARAH_DIR / "facts/sarah-chen-007.md").read_text()
    assert git(env.vault, "log", "-1", "--format=%s").strip() == f"extract: 2 facts proposed from {NOTE}"
    assert git(env.vault, "rev-parse", "HEAD") != head

    seen.unlink()
    again = extract(env.cfg, today=TODAY)  # nothing new: the program is not even asked
    assert again.notes == [] and again.exit_code is ExitCode.CLEAN and not seen.exists()

    with (env.workspace / NOTE).open("a") as f:
        f.write("- 18:00 Sarah Chen moved the readout to Thursday\n- 18:05 half a line")
    answer_file.write_text("[]")
    third = extract(env.cfg, today=TODAY)
    given = json.loads(seen.read_text())
    assert given["notes"] == [
        {"note": NOTE, "first_line": 10, "text": "- 18:00 Sarah Chen moved the readout to Thursday\n"}
    ]  # only whole lines: the unfinished last one waits for its line ending
    assert third.exit_code is ExitCode.CLEAN and third.proposals == []


def test_a_rewritten_note_is_read_again_from_the_start(env: Env, tmp_path: Path) -> None:
    _, seen = configure(env, tmp_path, [])
    extract(env.cfg, today=TODAY)
    path = env.workspace / NOTE
    path.write_text(path.read_text().replace("08:40", "08:45"))
    extract(env.cfg, today=TODAY)
    given = json.loads(seen.read_text())["notes"]
    assert [(n["note"], n["first_line"]) for n in given] == [(NOTE, 1)]
    assert given[0]["text"] == path.read_text()


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("Sure! Here are the facts:", "not JSON"),
        ({"facts": []}, "expected a JSON list"),
        (["a fact"], "item 2: expected an object"),
        ([{"entity": "areas/people/nobody", "fact": "x", "source_line": 3}], "no entity 'areas/people/nobody'"),
        ([{"entity": "areas/../../etc", "fact": "x", "source_line": 3, "new_entity": True}], "not a folder under"),
        ([{"entity": "/etc/cron.d", "fact": "x", "source_line": 3, "new_entity": True}], "not a folder under"),
        ([{"entity": SARAH, "fact": "", "source_line": 3}], "'fact' must be"),
        ([{"entity": SARAH, "fact": "x", "source_line": 99, "note": NOTE}], "'source_line' must be"),
        ([{"entity": SARAH, "fact": "x", "source_line": 3, "confidence": 0.9}], "unknown key(s) confidence"),
    ],
)
def test_a_malformed_answer_changes_nothing(env: Env, tmp_path: Path, answer: object, says: str) -> None:
    good = proposal(env)
    configure(env, tmp_path, [good, *answer] if isinstance(answer, list) else answer)
    before, head = env.snapshot(), git(env.vault, "rev-parse", "HEAD")
    items = env.items_path(SARAH).read_bytes()
    result = extract(env.cfg, today=TODAY)
    assert result.exit_code is ExitCode.SKIPPED_INPUT
    assert "answer rejected" in result.rejected and says in result.rejected
    assert env.items_path(SARAH).read_bytes() == items and env.snapshot() == before
    assert git(env.vault, "rev-parse", "HEAD") == head
    assert not (env.cfg.state_dir / "extracted.json").exists()  # the same text is handed over next time
    assert not (env.life / "etc").exists() and not (env.life / "areas/people/nobody").exists()


def test_dry_run_shows_the_proposals_and_writes_nothing(env: Env, tmp_path: Path) -> None:
    configure(env, tmp_path, [proposal(env)])
    items = env.items_path(SARAH).read_bytes()
    args = ["extract", "--dry-run", "--config", str(env.config_path)]
    done = subprocess.run([sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    line = line_of(env, NOTE, "readout deck")
    assert done.stdout.startswith(
        f"would propose: {SARAH} sarah-chen-007 [work] Sarah Chen presents the readout deck <- {NOTE}:{line}\n"
    )
    assert env.items_path(SARAH).read_bytes() == items
    assert not (env.cfg.state_dir / "extracted.json").exists()


def test_exit_codes_of_the_command_line(env: Env, tmp_path: Path) -> None:
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        args = ["extract", *extra, "--config", str(env.config_path)]
        return subprocess.run(
            [sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, check=False
        )

    unset = run()
    assert unset.returncode == 2 and "no [extract] command" in unset.stderr
    configure(env, tmp_path, "not json at all")
    refused = run("--json")
    assert refused.returncode == 5
    assert json.loads(refused.stdout)["rejected"].endswith(
        "answer rejected: not JSON (Expecting value: line 1 column 1 (char 0)); nothing changed"
    )


def test_answers_read_as_values() -> None:
    lines = {"memory/2026-12-01.md": (4, 9)}
    known = {"areas/people/sarah"}
    [p] = read_answer('[{"entity": "areas/people/sarah", "fact": " Tea ", "source_line": 4}]', lines, known)
    assert (p.entity, p.fact, p.category, p.source) == ("areas/people/sarah", "Tea", None, "memory/2026-12-01.md:4")
    assert read_answer("[]", lines, known) == []
    with pytest.raises(AnswerError, match="from 4 to 9"):
        read_answer('[{"entity": "areas/people/sarah", "fact": "x", "source_line": 3}]', lines, known)
    two = {**lines, "memory/2026-12-02.md": (1, 2)}
    with pytest.raises(AnswerError, match="'note' must name one of"):
        read_answer('[{"entity": "areas/people/sarah", "fact": "x", "source_line": 1}]', two, known)
    reserved = {"resources/agent"}
    with pytest.raises(AnswerError, match="holds other files"):
        answer = '[{"entity": "resources/agent", "fact": "x", "source_line": 4, "new_entity": true}]'
        read_answer(answer, lines, known, reserved)


def test_marks_follow_growth_and_notice_rewrites() -> None:
    first = new_text("n.md", b"a\nb\npart", None)
    assert first is not None and (first.first_line, first.text) == (1, "a\nb\n")
    assert new_text("n.md", b"a\nb\npart", first.mark) is None
    grown = new_text("n.md", b"a\nb\npart two\n", first.mark)
    assert grown is not None and (grown.first_line, grown.text) == (3, "part two\n")
    rewritten = new_text("n.md", b"A\nb\n", first.mark)
    assert rewritten is not None and (rewritten.first_line, rewritten.text) == (1, "A\nb\n")
    assert read_marks(dump_marks({"n.md": first.mark})) == {"n.md": first.mark}
    assert read_marks(b"not json") == {} and read_marks(None) == {}
    assert read_marks(dump_marks({"n.md": Mark(5, "x")}).replace(b'"version": 1', b'"version": 9')) == {}


def test_a_second_extraction_finishing_meanwhile_wins(env: Env, tmp_path: Path) -> None:
    """The program runs without the lock; if another run recorded its progress meanwhile, this one writes
    nothing, so the same text is never filed twice."""
    configure(env, tmp_path, [proposal(env)])
    state = env.cfg.state_dir / "extracted.json"
    script = tmp_path / "propose.py"
    script.write_text(SCRIPT + f"pathlib.Path({str(state)!r}).write_text('{{}}')\n")
    items = env.items_path(SARAH).read_bytes()
    result = extract(env.cfg, today=TODAY)
    assert result.exit_code is ExitCode.SKIPPED_INPUT
    assert "changed since it was read" in result.problems[0].message
    assert env.items_path(SARAH).read_bytes() == items and state.read_text() == "{}"


def test_an_entity_reached_through_a_symbolic_link_is_refused(env: Env, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (env.life / "areas/people/elsewhere").symlink_to(outside, target_is_directory=True)
    configure(env, tmp_path, [proposal(env, entity="areas/people/elsewhere", new_entity=True)])
    result = extract(env.cfg, today=TODAY)
    assert result.exit_code is ExitCode.SKIPPED_INPUT and "symbolic link" in result.rejected
    assert list(outside.iterdir()) == []
