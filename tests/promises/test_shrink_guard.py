"""The shrink guard on real passes: an agent's consolidation or a person's slip in Obsidian that would carry a
deletion or a cut past a ``[safety]`` bound is held (the other side keeps its copy, the rest syncs, exit 7), named
in the report and the run record, and carried by ``accept`` or undone by ``restore`` (docs/safety.md)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import inputs
from helpers.twoway import isolate_git

from vaultsync.api import HistoryError, NotFound, PassOptions, accept, restore, sync
from vaultsync.model import ExitCode, Report
from vaultsync.state import runs

DAYS = [f"2026-01-{d:02d}.md" for d in range(27, 32)]
MEMORY_70 = "# Memory\n\n" + "".join(f"- lesson {n}: keep the notebook tidy\n" for n in range(70))
PERSON_NAME = "Nora Person"
SUMMARY = "# Sarah\n\nSarah runs the bakery.\nShe likes rye.\nShe opens at six.\nHer sister is Ana.\n"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> inputs.Env:
    """MEMORY.md of 70 lines, five daily notes, Sarah (four facts, a five-line summary) and Tom, synced once."""
    isolate_git(
        monkeypatch.setenv, tmp_path / "git-env", f"[user]\n\tname = {PERSON_NAME}\n\temail = nora@example.org\n"
    )
    env = inputs.make_env(tmp_path)
    env.write(env.workspace / "MEMORY.md", MEMORY_70)
    for day in DAYS:
        env.daily(day, f"# {day[:-3]}\n\n- met Sarah at the bakery\n- bought rye\n")
    facts = [inputs.fact(f"sarah-{i}", f"Sarah fact {i}") for i in range(4)]
    env.entity("areas/people/sarah", facts, SUMMARY)
    env.entity("areas/people/tom", [inputs.fact("tom-0", "Tom rides a bike")], "# Tom\n\nA neighbour.\n")
    inputs.first_pass_clean(env)
    return env


def held_paths(report: Report) -> list[str]:
    return sorted(h.path for h in report.held)


def consolidate(env: inputs.Env) -> None:
    """What issue 47 saw a dreaming agent do in one night, plus one ordinary new fact."""
    env.write(env.workspace / "MEMORY.md", "# Memory\n\n- keep the notebook tidy\n- rye\n")
    for day in DAYS[:4]:
        (env.workspace / "memory" / day).unlink()
    env.write(env.life / "areas/people/sarah/items.json", inputs.dumps([]))
    env.write(env.life / "areas/people/sarah/summary.md", "# Sarah\n")
    tom = [*env.items("areas/people/tom"), inputs.fact("tom-1", "Tom moved to Leeds")]
    env.write(env.life / "areas/people/tom/items.json", inputs.dumps(tom))


def test_an_agents_consolidation_is_held_and_the_rest_syncs(env: inputs.Env) -> None:
    vault_before = env.vault_files()
    consolidate(env)

    report = env.sync()

    assert report.exit_code == ExitCode.HELD, report.to_json()
    paths = held_paths(report)
    assert "3 Resources/agent/MEMORY.md" in paths
    assert [p for p in paths if p.startswith("Daily/")] == [f"Daily/{d}" for d in DAYS[:4]]
    assert "2 Areas/people/sarah" in paths
    memory = next(h for h in report.held if h.path == "3 Resources/agent/MEMORY.md")
    assert (memory.writer, memory.before, memory.after, memory.unit) == ("agent", 71, 3, "lines")
    facts = next(h for h in report.held if h.path == "2 Areas/people/sarah" and h.unit == "facts")
    assert (facts.before, facts.after) == (4, 0)
    summary = next(h for h in report.held if h.path == "2 Areas/people/sarah" and h.unit == "lines")
    assert (summary.before, summary.after) == (5, 1)
    # The vault keeps every copy the agent cut; the ordinary new fact went through.
    after = env.vault_files()
    for path, data in vault_before.items():
        if not path.startswith("2 Areas/people/tom"):
            assert after.get(path) == data, path
    assert "Tom moved to Leeds" in env.note("2 Areas/people/tom/facts/tom-1.md")
    assert env.git("status", "--porcelain") == ""
    # Every face says it: the report's JSON, its lines, the run record.
    shown = report.to_json()["held"]
    assert {"path": "3 Resources/agent/MEMORY.md", "writer": "agent", "before": 71, "after": 3}.items() <= shown[
        [h["path"] for h in shown].index("3 Resources/agent/MEMORY.md")
    ].items()
    assert any(
        line.startswith("held: 3 Resources/agent/MEMORY.md: agent cut the file (71 -> 3 lines)")
        for line in report.attention()
    )
    # Held until the person acts: the next pass (through the write path, which keeps the record of runs)
    # holds the same, and writes nothing.
    again = sync(env.cfg, PassOptions(today=inputs.TODAY))
    assert held_paths(again) == paths and again.files_written == 0
    last = runs.last(env.cfg.state_dir)
    assert last is not None and last.exit_code == ExitCode.HELD
    assert "3 Resources/agent/MEMORY.md" in [h["path"] for h in last.held]
    assert "held change" in last.summary


def test_a_person_deleting_the_daily_notes_in_obsidian_is_held(env: inputs.Env) -> None:
    for day in DAYS:
        (env.vault / "Daily" / day).unlink()

    report = env.sync()

    assert report.exit_code == ExitCode.HELD, report.to_json()
    assert held_paths(report) == [f"Daily/{d}" for d in DAYS]
    assert {h.writer for h in report.held} == {"person"}
    assert all((env.workspace / "memory" / d).is_file() for d in DAYS)


def test_an_ordinary_day_is_not_held(env: inputs.Env) -> None:
    env.daily("2026-02-01.md", "# 2026-02-01\n\n- new day\n")
    env.write(env.workspace / "MEMORY.md", MEMORY_70 + "- lesson 70: water the plants\n")
    (env.workspace / "memory" / DAYS[0]).unlink()  # one daily note gone is a day's work
    facts = env.items("areas/people/sarah")
    env.write(env.life / "areas/people/sarah/items.json", inputs.dumps(facts[1:]))

    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert report.held == []
    assert not (env.vault / "Daily" / DAYS[0]).exists()
    assert json.loads(json.dumps(report.to_json()))["held"] == []


def author_of_last_change(env: inputs.Env, path: str) -> str:
    return env.git("log", "-1", "--format=%an", "--", path).strip()


def test_accept_carries_the_agents_cut_committed_as_the_person(env: inputs.Env) -> None:
    consolidate(env)
    assert env.sync().exit_code == ExitCode.HELD

    report = accept(env.cfg, ["3 Resources/agent/MEMORY.md"])

    assert "3 Resources/agent/MEMORY.md" not in held_paths(report)
    assert env.note("3 Resources/agent/MEMORY.md") == "# Memory\n\n- keep the notebook tidy\n- rye\n"
    assert author_of_last_change(env, "3 Resources/agent/MEMORY.md") == PERSON_NAME
    assert "accept held change: 3 Resources/agent/MEMORY.md" in env.git("log", "-1", "--format=%B")
    # The rest stays held until it is accepted too; "all" takes every one.
    assert report.exit_code == ExitCode.HELD and "Daily/2026-01-27.md" in held_paths(report)
    done = accept(env.cfg, ["all"])
    assert done.exit_code == ExitCode.CLEAN, done.to_json()
    assert not (env.vault / "Daily" / DAYS[0]).exists()
    assert not list((env.vault / "2 Areas/people/sarah/facts").glob("*.md"))
    assert env.git("status", "--porcelain") == ""


def test_accept_of_a_person_deleting_daily_notes_deletes_them_from_the_memory(env: inputs.Env) -> None:
    for day in DAYS:
        (env.vault / "Daily" / day).unlink()
    assert env.sync().exit_code == ExitCode.HELD

    report = accept(env.cfg, ["all"])

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert not any((env.workspace / "memory" / d).exists() for d in DAYS)
    assert author_of_last_change(env, f"Daily/{DAYS[0]}") == PERSON_NAME


def test_accept_of_something_not_held_is_refused(env: inputs.Env) -> None:
    with pytest.raises(NotFound, match=re.escape("nothing is held at 'Daily/2026-01-27.md'")):
        accept(env.cfg, ["Daily/2026-01-27.md"])


def test_restore_puts_the_good_version_back_on_the_side_that_shrank(env: inputs.Env) -> None:
    consolidate(env)
    assert env.sync().exit_code == ExitCode.HELD

    report = restore(env.cfg, "3 Resources/agent/MEMORY.md")
    assert (env.workspace / "MEMORY.md").read_text() == MEMORY_70
    assert "3 Resources/agent/MEMORY.md" not in held_paths(report)
    restore(env.cfg, "2 Areas/people/sarah")
    assert [f["id"] for f in env.items("areas/people/sarah")] == [f"sarah-{i}" for i in range(4)]
    assert (env.life / "areas/people/sarah/summary.md").read_text() == SUMMARY
    for day in DAYS[:4]:
        restore(env.cfg, f"Daily/{day}")
    final = env.sync()
    assert final.exit_code == ExitCode.CLEAN and final.held == [], final.to_json()
    assert all((env.workspace / "memory" / d).is_file() for d in DAYS)


def test_restore_at_an_earlier_commit_of_any_file_is_committed_as_the_person(env: inputs.Env) -> None:
    first = env.git("rev-parse", "HEAD").strip()
    tom = [*env.items("areas/people/tom"), inputs.fact("tom-1", "Tom moved to Leeds")]
    env.write(env.life / "areas/people/tom/items.json", inputs.dumps(tom))
    env.write(env.workspace / "memory" / DAYS[4], f"# {DAYS[4][:-3]}\n\n- met Sarah at the bakery\n- rain\n")
    assert env.sync().exit_code == ExitCode.CLEAN

    report = restore(env.cfg, f"Daily/{DAYS[4]}", at=first)

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert (env.workspace / "memory" / DAYS[4]).read_text().endswith("- bought rye\n")
    assert env.note(f"Daily/{DAYS[4]}").endswith("- bought rye\n")
    assert author_of_last_change(env, f"Daily/{DAYS[4]}") == PERSON_NAME
    with pytest.raises(HistoryError, match="no commit 'nope'"):
        restore(env.cfg, f"Daily/{DAYS[4]}", at="nope")
    with pytest.raises(NotFound, match="is not in the vault"):
        restore(env.cfg, "Daily/1999-01-01.md", at=first)


def test_a_person_deleting_the_daily_folder_is_held_and_restore_brings_it_back(env: inputs.Env) -> None:
    """The whole daily folder deleted in Obsidian is held like its notes deleted one by one: the memory keeps every
    daily note, the hold names each, and ``restore Daily`` puts the notes back from git."""
    shutil.rmtree(env.vault / "Daily")

    report = env.sync()

    assert report.exit_code == ExitCode.HELD, report.to_json()
    assert not report.stopped
    assert held_paths(report) == [f"Daily/{d}" for d in DAYS]
    assert all((env.workspace / "memory" / d).is_file() for d in DAYS)
    restored = restore(env.cfg, "Daily")
    assert restored.exit_code == ExitCode.CLEAN, restored.to_json()
    assert sorted(p.name for p in (env.vault / "Daily").iterdir()) == DAYS
    assert env.git("status", "--porcelain") == ""
