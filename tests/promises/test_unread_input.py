"""Input a pass cannot read is reported and left as it is on both sides; it never becomes a deletion or an
empty value (docs/safety.md, section 5).

Each test drives real passes over real files and a real git repository, and checks the bytes on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.inputs import Env, assert_exit, assert_quiet_second_pass, dumps, edit_body, errors, fact, make_env

from vaultsync.model import ExitCode

BOM = "\ufeff"
REL = "areas/people/bad"
NOTE_DIR = "2 Areas/people/bad"
FACT = fact("b1", "Bad has a dog", category="pets", source="conversation")


def synced(tmp_path: Path) -> tuple[Env, Path]:
    env = make_env(tmp_path)
    folder = env.entity(REL, [FACT, fact("b2", "Bad walks at six")], "# Bad\n\nA neighbour.\n")
    env.entity("areas/people/good", [fact("g1", "Good has a garden")], "# Good\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    return env, folder


# -- a properties block that is not recognised -----------------------------------------------------------------
def test_a_fact_note_with_a_bom_is_read_as_properties(tmp_path: Path) -> None:
    env, _ = synced(tmp_path)
    note = env.vault / NOTE_DIR / "facts/b1.md"
    note.write_text(BOM + env.note(f"{NOTE_DIR}/facts/b1.md").replace("a dog", "an old dog"), encoding="utf-8")

    report = env.sync()

    assert_exit(report, ExitCode.CLEAN)
    assert env.items(REL)[0] == {**FACT, "fact": "Bad has an old dog"}


def test_an_entity_note_with_a_bom_keeps_its_properties_out_of_the_summary(tmp_path: Path) -> None:
    env, folder = synced(tmp_path)
    note = env.vault / NOTE_DIR / "bad.md"
    note.write_text(BOM + env.note(f"{NOTE_DIR}/bad.md").replace("A neighbour.", "A kind neighbour."), "utf-8")

    report = env.sync()

    assert_exit(report, ExitCode.CLEAN)
    assert (folder / "summary.md").read_text(encoding="utf-8") == "# Bad\n\nA kind neighbour.\n"


def _blank_first_line(text: str) -> str:
    return "\n" + text


def _no_closing_fence(text: str) -> str:
    head, _, body = text.partition("\n---\n")
    return head + "\n" + body


def _spaces_before_fence(text: str) -> str:
    return "  " + text


UNREAD = {
    "blank-first-line": _blank_first_line,
    "no-closing-fence": _no_closing_fence,
    "indented": _spaces_before_fence,
}


@pytest.mark.parametrize("spoil", UNREAD.values(), ids=UNREAD.keys())
@pytest.mark.parametrize("kind", ["fact", "entity"])
def test_a_block_that_is_not_properties_is_reported_and_nothing_is_written(
    tmp_path: Path, kind: str, spoil: Callable[[str], str]
) -> None:
    env, folder = synced(tmp_path)
    rel = f"{NOTE_DIR}/facts/b1.md" if kind == "fact" else f"{NOTE_DIR}/bad.md"
    edited = env.note(rel).replace("a dog", "an old dog").replace("A neighbour", "A kind neighbour")
    spoilt = spoil(edited)
    (env.vault / rel).write_text(spoilt, encoding="utf-8")
    items, summary = (folder / "items.json").read_bytes(), (folder / "summary.md").read_bytes()

    report = env.sync()

    [problem] = errors(report)
    assert problem.path == rel
    assert "'---'" in problem.message and "left untouched on both sides" in problem.message
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert (folder / "items.json").read_bytes() == items
    assert (folder / "summary.md").read_bytes() == summary
    assert env.note(rel) == spoilt

    # Repaired, the person's edit arrives like any other.
    (env.vault / rel).write_text(edited, encoding="utf-8")
    assert_exit(env.sync(), ExitCode.CLEAN)
    if kind == "fact":
        assert env.items(REL)[0] == {**FACT, "fact": "Bad has an old dog"}
    else:
        assert (folder / "summary.md").read_text(encoding="utf-8") == "# Bad\n\nA kind neighbour.\n"
    assert_quiet_second_pass(env)


# -- a lone surrogate escape in items.json ---------------------------------------------------------------------
CUT_EMOJI = b'"Bad has a dog \\ud83d"'


def test_a_lone_surrogate_in_a_new_items_json_skips_only_that_fact(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    raw = dumps([fact("b1", "Bad has a dog"), fact("b2", "Bad walks at six")]).replace(b'"Bad has a dog"', CUT_EMOJI)
    folder = env.entity(REL, raw, "# Bad\n")

    report = env.sync()

    [problem] = errors(report)
    assert problem.path == str(folder / "items.json")
    assert "fact #1" in problem.message and "\\ud83d" in problem.message
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert sorted(p.name for p in (env.vault / NOTE_DIR / "facts").iterdir()) == ["b2.md"]
    assert (folder / "items.json").read_bytes() == raw


def test_a_lone_surrogate_written_later_leaves_that_fact_as_it_is_and_the_rest_syncs(tmp_path: Path) -> None:
    env, folder = synced(tmp_path)
    b1 = env.note(f"{NOTE_DIR}/facts/b1.md")
    raw = (folder / "items.json").read_bytes().replace(b'"Bad has a dog"', CUT_EMOJI).replace(b"at six", b"at five")
    (folder / "items.json").write_bytes(raw)
    edit_body(env, f"{NOTE_DIR}/facts/b1.md", "a dog", "a small dog")
    (env.life / "areas/people/good/summary.md").write_text("# Good\n\nWaters at noon.\n", encoding="utf-8")

    report = env.sync()

    [problem] = errors(report)
    assert problem.path == str(folder / "items.json") and "\\ud83d" in problem.message
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert env.note(f"{NOTE_DIR}/facts/b1.md") == b1.replace("a dog", "a small dog"), "the person's edit is kept"
    assert (folder / "items.json").read_bytes() == raw
    assert "at five" in env.note(f"{NOTE_DIR}/facts/b2.md")
    assert "Waters at noon." in env.note("2 Areas/people/good/good.md")

    # Fixed by the agent: the two edits of that fact meet like any others.
    (folder / "items.json").write_bytes(raw.replace(CUT_EMOJI, b'"Bad has a dog \\ud83d\\udc36"'))
    report = env.sync()
    assert errors(report) == []
    assert [c.key for c in report.conflicts] == [f"fact:{REL}#b1"]
    assert env.items(REL)[0]["fact"] == "Bad has a dog \U0001f436"


# -- a fact whose text is not a string -------------------------------------------------------------------------
def test_text_typed_into_the_body_of_a_fact_whose_text_is_a_list_is_not_lost(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    folder = env.entity(REL, [fact("b1", "unused", fact=["Bad has a dog", "and a cat"])], "# Bad\n")
    env.entity("areas/people/good", [fact("g1", "Good has a garden")], "# Good\n")
    assert_exit(env.sync(), ExitCode.CLEAN)
    rel = f"{NOTE_DIR}/facts/b1.md"
    typed = env.note(rel) + "Bad also has a parrot\n"
    (env.vault / rel).write_text(typed, encoding="utf-8")
    items = (folder / "items.json").read_bytes()

    report = env.sync()

    [problem] = errors(report)
    assert problem.path == rel and "'fact' property" in problem.message
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert env.note(rel) == typed
    assert (folder / "items.json").read_bytes() == items

    # Deleting the property makes the body the fact's text.
    (env.vault / rel).write_text(typed.replace("fact:\n  - Bad has a dog\n  - and a cat\n", ""), encoding="utf-8")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.items(REL)[0]["fact"] == "Bad also has a parrot"
    assert_quiet_second_pass(env)


# -- a daily note that is not UTF-8 ------------------------------------------------------------------------------
def test_a_daily_note_that_is_not_utf8_says_how_to_fix_it_and_syncs_once_fixed(tmp_path: Path) -> None:
    env, _ = synced(tmp_path)
    text = "# 2026-02-01\n\n- Lunch at the caf\u00e9 with Bad\n"
    daily = env.daily("2026-02-01.md", text.encode("cp1252"))

    report = env.sync()

    [problem] = errors(report)
    assert problem.path == str(daily)
    assert "not valid UTF-8 (byte 0xe9" in problem.message and "save it as UTF-8" in problem.message
    assert "iconv -f windows-1252 -t utf-8" in problem.message
    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert not (env.vault / "Daily/2026-02-01.md").exists()
    assert daily.read_bytes() == text.encode("cp1252")

    daily.write_text(text, encoding="utf-8")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert env.note("Daily/2026-02-01.md") == text
