"""Bad input on either side: each is one problem line naming the file, the rest of the pass goes on.

Every case pairs the bad input with a good entity, and checks that the good entity is rendered, that nothing is
written outside the bad unit's own place, that the memory tree is byte-identical, and that the pass exits 5.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.inputs import (
    Env,
    assert_exit,
    assert_quiet_second_pass,
    dumps,
    edit_body,
    errors,
    fact,
    json_type_equal,
    make_env,
)

from vaultsync.app.entities import get_fact
from vaultsync.model import ExitCode, Report, Severity

GOOD = {"2 Areas/people/good/good.md", "2 Areas/people/good/facts/g1.md"}
BAD_DIR = "2 Areas/people/bad/"


def good_env(tmp_path: Path) -> Env:
    env = make_env(tmp_path)
    env.entity("areas/people/good", [fact("g1", "Good has a garden")], "# Good\n")
    return env


def run_bad(env: Env) -> tuple[Report, set[str]]:
    """One pass; returns its report and the vault files it created. The memory tree must not change."""
    memory, vault = env.memory(), env.vault_files()
    report = env.sync()
    assert env.memory() == memory
    after = env.vault_files()
    assert {k: v for k, v in after.items() if k in vault} == vault, "a file that was there changed"
    return report, set(after) - set(vault)


def assert_one_error(report: Report, path: Path | str) -> str:
    """Exactly one problem line, an error naming ``path``, and exit 5; returns its message."""
    lines = [p.line() for p in report.problems]
    assert len(report.problems) == 1, lines
    problem = report.problems[0]
    assert problem.path == str(path), lines
    assert problem.severity is Severity.ERROR
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    return problem.message


# -- items.json that cannot be read as a whole ---------------------------------------------------------------
UNREADABLE: dict[str, bytes] = {
    "unparseable": b'[\n  {"id": "b1", "fact": "Bad has a dog",\n',
    "empty": b"",
    "whitespace-only": b"  \r\n\t\n",
    "nested-5000-deep": b"[" * 5000 + b"]" * 5000,
    "fact-nested-5000-deep": b'[{"id": "b1", "fact": "deep", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}]",
    "facts-is-a-string": b'{"entity": "Bad", "facts": "x"}',
    "not-utf8": b'[{"id": "b1", "fact": "Bad likes caf\xe9 au lait"}]',
    "top-level-string": b'"just a string"',
}


@pytest.mark.parametrize("raw", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_unreadable_items_json_is_one_problem_and_the_pass_goes_on(tmp_path: Path, raw: bytes) -> None:
    env = good_env(tmp_path)
    folder = env.entity("areas/people/bad", raw)

    report, created = run_bad(env)

    assert_one_error(report, folder / "items.json")
    assert created == GOOD
    assert (folder / "items.json").read_bytes() == raw


def test_items_json_broken_after_a_sync_keeps_its_notes_until_it_is_fixed(tmp_path: Path) -> None:
    env = good_env(tmp_path)
    good_items = dumps([fact("b1", "Bad has a dog"), fact("b2", "Bad walks at six")])
    folder = env.entity("areas/people/bad", good_items, "# Bad\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    notes = {k: v for k, v in env.vault_files().items() if k.startswith(BAD_DIR)}
    broken = good_items[:-20]
    (folder / "items.json").write_bytes(broken)
    # A person's edit elsewhere in the same pass still goes through.
    edit_body(env, "2 Areas/people/good/facts/g1.md", "a garden", "a large garden")

    report = env.sync()

    assert_one_error(report, folder / "items.json")
    assert {k: v for k, v in env.vault_files().items() if k.startswith(BAD_DIR)} == notes
    assert (folder / "items.json").read_bytes() == broken
    assert (folder / "summary.md").read_bytes() == b"# Bad\n"
    assert env.items("areas/people/good")[0]["fact"] == "Good has a large garden"

    (folder / "items.json").write_bytes(good_items)
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert {k: v for k, v in env.vault_files().items() if k.startswith(BAD_DIR)} == notes
    assert (folder / "items.json").read_bytes() == good_items


# -- single facts that cannot be used -------------------------------------------------------------------------
def test_a_fact_that_is_not_an_object_skips_only_that_fact(tmp_path: Path) -> None:
    env = good_env(tmp_path)
    items = [fact("b1", "Bad has a dog"), "Bad also has a cat", fact("b3", "Bad walks at six")]
    folder = env.entity("areas/people/bad", items, "# Bad\n")
    raw = (folder / "items.json").read_bytes()

    report, created = run_bad(env)

    message = assert_one_error(report, folder / "items.json")
    assert "#2" in message
    assert created == GOOD | {f"{BAD_DIR}bad.md", f"{BAD_DIR}facts/b1.md", f"{BAD_DIR}facts/b3.md"}
    assert "facts_active: 2\n" in env.note(f"{BAD_DIR}bad.md")

    # Editing a sibling in the vault lands on the right element and keeps the string element as it is.
    edit_body(env, f"{BAD_DIR}facts/b3.md", "at six", "at seven")
    report = env.sync()
    assert len(errors(report)) == 1
    assert (folder / "items.json").read_bytes() == raw.replace(b"at six", b"at seven")
    json_type_equal(env.items("areas/people/bad")[1], "Bad also has a cat")


BAD_IDS = {
    "dot-dot-slash": "../x",
    "slash": "a/b",
    "colon": "con:",
    "hash": "#x",
    "caret": "x^y",
    "brackets": "[x]",
    "control-char": "a\x07b",
    "backslash": "a\\b",
    "dot-dot": "..",
}


@pytest.mark.parametrize("bad_id", BAD_IDS.values(), ids=BAD_IDS.keys())
def test_unsafe_fact_id_is_reported_and_skipped(tmp_path: Path, bad_id: str) -> None:
    env = good_env(tmp_path)
    items = [fact("b1", "Bad has a dog"), fact(bad_id, "Bad has an unsafe id"), fact("b3", "Bad walks at six")]
    folder = env.entity("areas/people/bad", items, "# Bad\n")
    raw = (folder / "items.json").read_bytes()

    report, created = run_bad(env)

    assert_one_error(report, folder / "items.json")
    assert created == GOOD | {f"{BAD_DIR}bad.md", f"{BAD_DIR}facts/b1.md", f"{BAD_DIR}facts/b3.md"}
    assert not (env.vault / "2 Areas/people/x.md").exists()

    edit_body(env, f"{BAD_DIR}facts/b1.md", "a dog", "two dogs")
    env.sync()
    assert (folder / "items.json").read_bytes() == raw.replace(b"a dog", b"two dogs")


BAD_SLUGS = {
    "colon": "con:",
    "hash": "#x",
    "caret": "x^y",
    "brackets": "[x]",
    "control-char": "a\x01b",
    "windows-reserved": "nul",
    "pipe": "a|b",
}


@pytest.mark.parametrize("slug", BAD_SLUGS.values(), ids=BAD_SLUGS.keys())
def test_unsafe_entity_slug_is_reported_and_skipped(tmp_path: Path, slug: str) -> None:
    env = good_env(tmp_path)
    folder = env.entity(f"areas/people/{slug}", [fact("s1", "Unsafe slug fact")], "# Unsafe\n")

    report, created = run_bad(env)

    assert_one_error(report, folder)
    assert created == GOOD


# -- names and links ------------------------------------------------------------------------------------------
def _case_notes(env: Env) -> dict[str, str]:
    """The casey entity's fact notes, by the id each one shows."""
    notes = {k: v.decode() for k, v in env.vault_files().items() if k.startswith("2 Areas/people/casey/facts/")}
    assert len({k.casefold() for k in notes}) == len(notes), "note names must not collide on a case-insensitive disk"
    by_id = {}
    for path, text in notes.items():
        m = re.search(r"^id: (.+)$", text, re.M)
        assert m, text
        by_id[m.group(1)] = path
    return by_id


def test_ids_differing_only_in_case_are_both_rendered_and_nothing_is_lost(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    folder = env.entity("areas/people/casey", [fact("F1", "Upper-case id fact"), fact("f1", "Lower-case id fact")])
    raw = (folder / "items.json").read_bytes()

    report = env.sync()

    assert not errors(report)
    assert (folder / "items.json").read_bytes() == raw
    by_id = _case_notes(env)
    assert set(by_id) == {"F1", "f1"}
    assert env.note(by_id["F1"]).endswith("---\nUpper-case id fact\n")
    assert env.note(by_id["f1"]).endswith("---\nLower-case id fact\n")
    assert_quiet_second_pass(env)

    edit_body(env, by_id["F1"], "Upper-case id", "Upper id")
    edit_body(env, by_id["f1"], "Lower-case id", "Lower id")
    assert not errors(env.sync())
    assert (folder / "items.json").read_bytes() == raw.replace(b"Upper-case id", b"Upper id").replace(
        b"Lower-case id", b"Lower id"
    )
    assert _case_notes(env) == by_id


def test_superseded_by_an_id_that_differs_only_in_case_survives_an_idle_pass(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = [
        fact("F1", "Upper-case id fact", status="superseded", supersededBy="f1"),
        fact("f1", "Lower-case id fact"),
    ]
    folder = env.entity("areas/people/casey", items)
    raw = (folder / "items.json").read_bytes()
    assert not errors(env.sync())
    by_id = _case_notes(env)
    target = by_id["f1"].rsplit("/", 1)[1].removesuffix(".md")
    assert re.search(rf'^supersededBy: "\[\[{re.escape(target)}(\|[^\]]*)?\]\]"$', env.note(by_id["F1"]), re.M)

    env.sync()  # no edits on either side

    assert env.items("areas/people/casey")[0]["supersededBy"] == "f1"
    assert (folder / "items.json").read_bytes() == raw


def test_entity_mia_is_not_linked_from_a_fact_about_miami(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/mia", [fact("mia-001", "Mia moved to Berlin")], "# Mia\n")
    env.entity(
        "areas/companies/harbor",
        [
            fact("h1", "Harbor opened an office in Miami"),
            fact("h2", "Harbor hired Mia as a designer"),
            fact("h3", "Harbor's Miamians team grew"),
        ],
        "# Harbor Co\n",
    )

    assert not env.sync().problems

    facts = "2 Areas/companies/harbor/facts"
    assert "mentions" not in env.note(f"{facts}/h1.md")
    assert "mentions" not in env.note(f"{facts}/h3.md")
    assert env.note(f"{facts}/h2.md") == (
        "---\n"
        "id: h2\n"
        "category: context\n"
        "timestamp: 2026-01-15\n"
        "source: conversation\n"
        "status: active\n"
        'entity: "[[harbor|Harbor Co]]"\n'
        "mentions:\n"
        '  - "[[mia|Mia]]"\n'
        "---\n"
        "Harbor hired Mia as a designer\n"
    )
    assert 'related:\n  - "[[mia|Mia]]"\n' in env.note("2 Areas/companies/harbor/harbor.md")


def test_agent_keys_named_entity_and_mentions_keep_their_own_values(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/mia", [fact("mia-001", "Mia moved to Berlin")], "# Mia\n")
    own = {"entity": "harbor-internal", "mentions": ["legacy-crm", 3]}
    folder = env.entity("areas/companies/harbor", [fact("h1", "Harbor hired Mia as a designer", **own)], "# Harbor\n")
    raw = (folder / "items.json").read_bytes()

    assert not env.sync().problems

    note = "2 Areas/companies/harbor/facts/h1.md"
    assert env.note(note) == (
        "---\n"
        "id: h1\n"
        "category: context\n"
        "timestamp: 2026-01-15\n"
        "source: conversation\n"
        "status: active\n"
        "entity: harbor-internal\n"
        "mentions:\n"
        "  - legacy-crm\n"
        "  - 3\n"
        "---\n"
        "Harbor hired Mia as a designer\n"
    )
    assert_quiet_second_pass(env)

    edit_body(env, note, "a designer", "a senior designer")
    assert not env.sync().problems
    assert (folder / "items.json").read_bytes() == raw.replace(b"a designer", b"a senior designer")
    json_type_equal({k: env.items("areas/companies/harbor")[0][k] for k in own}, own)


def test_a_person_editing_derived_fact_properties_is_kept_or_reported(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/mia", [fact("mia-001", "Mia moved to Berlin")], "# Mia\n")
    env.entity("areas/people/bo", [fact("b1", "Bo met Mia at the market")], "# Bo\n")
    assert not env.sync().problems
    note = "2 Areas/people/bo/facts/b1.md"
    edited = (
        env.note(note)
        .replace('entity: "[[bo|Bo]]"', 'entity: "[[mia|Mia]]"')
        .replace('  - "[[mia|Mia]]"\n', '  - "[[mia|Mia]]"\n  - "[[market]]"\n')
    )
    assert edited != env.note(note)
    (env.vault / note).write_text(edited, encoding="utf-8")

    report = env.sync()

    reported = [p for p in report.problems if p.path == note]
    assert reported or env.note(note) == edited, "the edit was reverted without a word"


# -- other bad inputs -----------------------------------------------------------------------------------------
def test_daily_note_with_an_impossible_date_is_reported(tmp_path: Path) -> None:
    env = good_env(tmp_path)
    path = env.daily("2026-02-30.md", "# 2026-02-30\n\nThis day does not exist.\n")
    env.daily("2026-02-28.md", "# 2026-02-28\n\nA real day.\n")

    report, created = run_bad(env)

    assert_one_error(report, path)
    assert created == GOOD | {"Daily/2026-02-28.md"}


def _dir_link(env: Env, outside: Path) -> Path:
    (outside / "items.json").write_bytes(dumps([fact("o1", "Outside fact")]))
    link = env.life / "areas/people/linked"
    link.symlink_to(outside, target_is_directory=True)
    return link


def _file_link(env: Env, outside: Path) -> Path:
    (outside / "notes.md").write_text("# Outside notes\n", encoding="utf-8")
    link = env.life / "areas/people/good/notes.md"
    link.symlink_to(outside / "notes.md")
    return link


def _items_link(env: Env, outside: Path) -> Path:
    (outside / "items.json").write_bytes(dumps([fact("o1", "Outside fact")]))
    folder = env.life / "areas/people/linked-items"
    folder.mkdir()
    link = folder / "items.json"
    link.symlink_to(outside / "items.json")
    return link


def _memory_link(env: Env, outside: Path) -> Path:
    (outside / "2026-01-10.md").write_text("# Outside daily\n", encoding="utf-8")
    (env.workspace / "memory").mkdir(exist_ok=True)
    link = env.workspace / "memory/2026-01-10.md"
    link.symlink_to(outside / "2026-01-10.md")
    return link


LINKS: dict[str, Callable[[Env, Path], Path]] = {
    "life-folder": _dir_link,
    "life-file": _file_link,
    "items-json": _items_link,
    "daily-note": _memory_link,
}


@pytest.mark.parametrize("make_link", LINKS.values(), ids=LINKS.keys())
def test_symlink_pointing_outside_the_tree_is_not_followed(tmp_path: Path, make_link: Callable[..., Path]) -> None:
    env = good_env(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = make_link(env, outside)
    outside_before = {p.name: p.read_bytes() for p in outside.iterdir()}

    report, created = run_bad(env)

    assert_one_error(report, link)
    assert created == GOOD
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == outside_before
    assert link.is_symlink()


# -- the vault side -------------------------------------------------------------------------------------------
MALFORMED = {
    "unclosed-flow": "---\nid: b1\nstatus: [active\n---\nBad has a dog\n",
    "duplicate-key": "---\nid: b1\nstatus: active\nstatus: superseded\n---\nBad has a dog\n",
    "bad-indent": "---\nid: b1\n  status: active\n category: x\n---\nBad has a dog\n",
    "not-a-mapping": "---\n- just\n- a list\n---\nBad has a dog\n",
    "tab-indent": "---\nid: b1\ntags:\n\t- a\n---\nBad has a dog\n",
}


@pytest.mark.parametrize("text", MALFORMED.values(), ids=MALFORMED.keys())
def test_fact_note_with_malformed_frontmatter_is_reported_and_left_untouched(tmp_path: Path, text: str) -> None:
    env = good_env(tmp_path)
    folder = env.entity("areas/people/bad", [fact("b1", "Bad has a dog"), fact("b2", "Bad walks at six")], "# Bad\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    raw = (folder / "items.json").read_bytes()
    note = f"{BAD_DIR}facts/b1.md"
    (env.vault / note).write_text(text, encoding="utf-8")
    edit_body(env, f"{BAD_DIR}facts/b2.md", "at six", "at seven")

    report = env.sync()

    assert_one_error(report, note)
    assert env.note(note) == text
    assert (folder / "items.json").read_bytes() == raw.replace(b"at six", b"at seven")

    # The agent changing that very fact meanwhile still leaves the person's broken note alone.
    (folder / "items.json").write_bytes(raw.replace(b"a dog", b"an old dog"))
    report = env.sync()
    assert_one_error(report, note)
    assert env.note(note) == text
    assert (folder / "items.json").read_bytes() == raw.replace(b"a dog", b"an old dog")


def test_entity_note_with_malformed_frontmatter_is_reported_and_left_untouched(tmp_path: Path) -> None:
    env = good_env(tmp_path)
    folder = env.entity("areas/people/bad", [fact("b1", "Bad has a dog")], "# Bad\n\nA neighbour.\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    summary = (folder / "summary.md").read_bytes()
    note = f"{BAD_DIR}bad.md"
    text = env.note(note).replace("kind: people\n", "kind: [people\n").replace("A neighbour.", "A good neighbour.")
    (env.vault / note).write_text(text, encoding="utf-8")

    report = env.sync()

    assert_one_error(report, note)
    assert env.note(note) == text
    assert (folder / "summary.md").read_bytes() == summary


# -- secrets --------------------------------------------------------------------------------------------------
def test_secrets_stay_out_of_git_but_stay_in_the_vault(tmp_path: Path) -> None:
    github = "ghp_" + "A1b2C3d4" * 5
    openai = "sk-" + "Qw3rTy9u" * 6
    env = good_env(tmp_path)
    env.daily("2026-01-27.md", f"# 2026-01-27\n\nSet up CI today.\nPush token: {github}\nDone.\n")
    env.entity("areas/people/dev", [fact("d1", f"The bot's API key is {openai} for now")], "# Dev\n")

    report = env.sync()

    daily_note, fact_note = "Daily/2026-01-27.md", "2 Areas/people/dev/facts/d1.md"
    assert github in env.note(daily_note)
    assert openai in env.note(fact_note)
    history = env.git("log", "-p", "--all")
    assert "2 Areas/people/good/facts/g1.md" in history, "the clean notes are committed"
    assert github not in history and openai not in history
    assert github[4:16] not in history and openai[3:15] not in history

    fact_line = env.note(fact_note).splitlines().index(f"The bot's API key is {openai} for now") + 1
    for path, token, line in ((daily_note, github, 4), (fact_note, openai, fact_line)):
        about = [p for p in report.problems if p.path == path]
        assert len(about) == 1, [p.line() for p in report.problems]
        assert re.search(rf"\bline {line}\b", about[0].message), about[0].message
        assert token not in about[0].line() and token[4:12] not in about[0].line()
    for problem in report.problems:
        assert github[4:12] not in problem.line() and openai[3:11] not in problem.line()

    # Later passes keep them out of git too.
    with (env.workspace / "memory/2026-01-27.md").open("a", encoding="utf-8") as handle:
        handle.write("Evening: rotated nothing yet.\n")
    env.sync()
    history = env.git("log", "-p", "--all")
    assert github not in history and openai not in history
    assert os.path.exists(env.vault / daily_note) and "rotated nothing" in env.note(daily_note)


# -- NaN and Infinity ---------------------------------------------------------------------------------------------
def test_nan_and_infinity_in_items_json_are_kept_verbatim_and_settle(tmp_path: Path) -> None:
    """Python's json (and so many agents) reads and writes ``NaN`` and ``Infinity``: kept as written, shown as
    ``.nan``/``.inf``, and a full pass after the first plans nothing, at the first import and after an edit."""
    env = make_env(tmp_path)
    raw = b'[\n  {"id": "f1", "fact": "Sensor drift", "score": NaN, "limit": Infinity, "floor": -Infinity}\n]\n'
    items = env.entity("projects/probe", raw) / "items.json"
    assert_exit(env.sync(), ExitCode.CLEAN)
    note = (env.vault / "1 Projects/probe/facts/f1.md").read_text(encoding="utf-8")
    assert "score: .nan" in note and "limit: .inf" in note and "floor: -.inf" in note
    for snapshot in env.cfg.state_dir.glob("snapshot*"):
        snapshot.unlink()  # a full pass, not the quick check
    again = env.sync()
    assert again.files_written == 0 and again.actions == [], again.to_json()
    edit_body(env, "1 Projects/probe/facts/f1.md", "Sensor drift", "Sensor drift after a reboot")
    env.sync()
    assert items.read_bytes() == raw.replace(b"Sensor drift", b"Sensor drift after a reboot")
    assert env.sync(dry_run=True).actions == []
    shown = get_fact(env.cfg, "f1", "projects/probe").to_json()  # what GET /facts and MCP answer, strict JSON
    assert json.loads(json.dumps(shown, allow_nan=False))["record"]["limit"] == "Infinity"
