"""A fact keeps who it is when its note is renamed, restored from Obsidian's trash or re-downloaded by iCloud,
and an edit of its ``id`` property is reported instead of applied (docs/vault-format.md, "Note names for facts").

Every test starts from vault-example after one clean first pass, on real files and a real git repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from helpers.twoway import SARAH, SARAH_DIR, Env, props_of, replace_text, set_prop
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.core.claims import Claim, Kind, claim
from vaultsync.model import ExitCode


def ids(env: Env) -> list[str]:
    return [str(f.get("id")) for f in env.facts(SARAH)]


def warnings_about(report: Any, path: str) -> list[str]:
    return [p.message for p in report.problems if p.path == path]


def test_a_renamed_fact_note_keeps_its_fact(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-005")
    renamed = note.with_name("Thursday check-in.md")
    note.rename(renamed)
    replace_text(renamed, "10:30", "11:00")
    before = ids(env)

    report = env.sync()

    assert report.exit_code is ExitCode.CLEAN, [p.line() for p in report.problems]
    assert ids(env) == before, "the fact lost its id"
    assert env.fact(SARAH, "sarah-chen-005")["fact"].endswith("Thursdays at 11:00")
    assert env.fact(SARAH, "sarah-chen-002")["supersededBy"] == "sarah-chen-005"
    assert not renamed.exists() and "11:00" in note.read_text(encoding="utf-8"), "renamed back to its id"
    assert props_of(env.fact_note(SARAH_DIR, "sarah-chen-002"))["supersededBy"] == "[[sarah-chen-005]]"


def test_a_fact_note_restored_from_the_trash_keeps_its_id(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-005")
    trash = env.vault / ".trash"
    trash.mkdir()
    kept = trash / note.name
    shutil.move(note, kept)
    env.sync()
    assert "sarah-chen-005" not in ids(env)

    shutil.move(kept, note)  # Obsidian's "restore" puts it back under its name
    report = env.sync()

    assert report.exit_code is ExitCode.CLEAN, [p.line() for p in report.problems]
    assert "sarah-chen-005" in ids(env) and not any(i.startswith("sarah-chen-m") for i in ids(env))
    assert env.fact(SARAH, "sarah-chen-005")["source"] == "memory/2026-11-05.md"
    assert env.fact(SARAH, "sarah-chen-002")["supersededBy"] == "sarah-chen-005"


def test_an_icloud_copy_of_an_evicted_note_is_that_fact(env: Env) -> None:
    """iCloud evicts a note to ``.name.md.icloud`` and, on a clash, brings it back as ``name 2.md``."""
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    text = note.read_bytes()
    note.unlink()
    (note.parent / ".sarah-chen-004.md.icloud").write_bytes(b"bplist00")
    (note.parent / "sarah-chen-004 2.md").write_bytes(text)
    before = env.facts(SARAH)

    report = env.sync()

    assert report.exit_code is ExitCode.CLEAN, [p.line() for p in report.problems]
    assert env.facts(SARAH) == before
    assert note.read_bytes() == text and not (note.parent / "sarah-chen-004 2.md").exists()


def test_a_copy_of_a_present_note_is_reported_not_made_a_fact(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-004")
    copy = note.with_name("sarah-chen-004 2.md")
    shutil.copyfile(note, copy)
    before = env.facts(SARAH)

    report = env.sync()

    assert env.facts(SARAH) == before
    assert copy.exists() and note.exists()
    said = warnings_about(report, f"{SARAH_DIR}/facts/sarah-chen-004 2.md")
    assert len(said) == 1 and "sarah-chen-004" in said[0] and "delete it" in said[0], said


def test_removing_or_changing_an_id_property_is_reported_and_left_alone(env: Env) -> None:
    removed = env.fact_note(SARAH_DIR, "sarah-chen-003")
    text = removed.read_text(encoding="utf-8")
    removed.write_text(text.replace("id: sarah-chen-003\n", ""), encoding="utf-8")
    changed = env.fact_note(SARAH_DIR, "sarah-chen-004")
    set_prop(changed, "id", "sarah-chen-001")  # another fact's id
    edited = changed.read_bytes()
    before = env.items_path(SARAH).read_bytes()

    report = env.sync()

    assert env.items_path(SARAH).read_bytes() == before
    assert changed.read_bytes() == edited and "id: sarah-chen-003" not in removed.read_text(encoding="utf-8")
    gone = warnings_about(report, f"{SARAH_DIR}/facts/sarah-chen-003.md")
    moved = warnings_about(report, f"{SARAH_DIR}/facts/sarah-chen-004.md")
    assert len(gone) == 1 and "removed" in gone[0] and "put back 'id: sarah-chen-003'" in gone[0], gone
    assert len(moved) == 1 and "'sarah-chen-001'" in moved[0] and "put back 'id: sarah-chen-004'" in moved[0]
    # The same warnings stand on the next pass, until the ids are put back; then edits flow again.
    again = env.sync()
    assert warnings_about(again, f"{SARAH_DIR}/facts/sarah-chen-004.md") == moved
    set_prop(changed, "id", "sarah-chen-004")
    removed.write_text(text.replace("written agenda", "short written agenda"), encoding="utf-8")
    env.sync()
    assert env.fact(SARAH, "sarah-chen-003")["fact"] == text.split("---\n")[-1].strip()
    assert env.items_path(SARAH).read_bytes() == before


def test_a_renamed_note_of_a_fact_the_agent_deleted_goes_with_it(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-006")
    renamed = note.with_name("pilot results.md")
    note.rename(renamed)
    env.agent_edit(SARAH, lambda facts: facts.pop())

    env.sync()
    again = env.sync()

    assert "sarah-chen-006" not in ids(env)
    assert not renamed.exists() and not note.exists()
    assert again.files_written == 0


# -- the rule, as values -----------------------------------------------------------------------------------
def test_claims_by_example() -> None:
    holders = {"a1": "a1", "a2": "a2", "f1~2": "f1", "f1": "f1", "acme-161c54": "x"}
    present = {"a1", "f1", "f1~2", "n1", "n2", "n3", "n4", "n5", "n6", "acme-161c54"}
    new = {"n1": "a2", "n2": "a1", "n3": "gone-7", "n4": None, "n5": "bad/id", "n6": "acme-161c54"}
    assert claim(new, holders, present) == {
        "n1": Claim(Kind.ADOPT, "a2", "a2"),
        "n2": Claim(Kind.COPY, "a1", "a1"),
        "n3": Claim(Kind.KEEP, "", "gone-7"),
        "n4": Claim(Kind.MINT),
        "n5": Claim(Kind.MINT),
        "n6": Claim(Kind.MINT),
    }
    two = claim({"n1": "a2", "n2": "a2"}, holders, present - {"a1"})
    assert {c.kind for c in two.values()} == {Kind.AMBIGUOUS} and two["n1"].missing == ("a2",)


NAMES = st.sampled_from(["a", "b", "c", "d", "e", "A"])


@given(
    st.dictionaries(NAMES.map(lambda n: f"new-{n}"), st.none() | NAMES, max_size=5),
    st.dictionaries(NAMES, NAMES, max_size=5),
    st.sets(NAMES, max_size=5),
)
def test_claims_never_give_one_fact_two_notes_nor_take_a_present_one(
    new: dict[str, Any], holders: dict[str, str], present: set[str]
) -> None:
    present = present | set(new)
    found = claim(new, holders, present)
    adopted = [c.note for c in found.values() if c.kind is Kind.ADOPT]
    assert len(adopted) == len(set(adopted))
    assert not set(adopted) & present
    kept = [c.fact_id for c in found.values() if c.kind is Kind.KEEP]
    assert len(kept) == len(set(kept)) and not set(kept) & set(holders.values())
    for note, got in found.items():
        assert got.kind is Kind.MINT or got.fact_id == new[note]


def test_the_id_of_a_template_note_is_still_minted(env: Env) -> None:
    """A note from the Fact template has no id: it gets a minted one, as before."""
    note = env.vault / SARAH_DIR / "facts" / "Untitled.md"
    note.write_text("---\nstatus: active\ncategory: hobby\n---\nSarah Chen sails on weekends\n", encoding="utf-8")
    env.sync()
    assert ids(env)[-1] == "sarah-chen-007"
    assert env.fact_note(SARAH_DIR, "sarah-chen-007").exists() and not note.exists()


def test_restored_twice_is_not_two_facts(env: Env, tmp_path: Path) -> None:
    note = env.fact_note(SARAH_DIR, "sarah-chen-001")
    text = note.read_bytes()
    note.unlink()
    env.sync()
    for name in ("sarah-chen-001.md", "sarah-chen-001 1.md"):
        (note.parent / name).write_bytes(text)

    report = env.sync()

    assert "sarah-chen-001" not in ids(env)
    assert len(warnings_about(report, f"{SARAH_DIR}/facts/sarah-chen-001 1.md")) == 1
    assert (note.parent / "sarah-chen-001 1.md").exists() and note.exists()


# -- an entity note renamed ------------------------------------------------------------------------------
def test_a_renamed_entity_note_keeps_the_summary_and_its_edits_sync(env: Env) -> None:
    summary = env.life / SARAH / "summary.md"
    before = summary.read_text(encoding="utf-8")
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    renamed = note.with_name("Sarah Chen.md")
    note.rename(renamed)

    report = env.sync()

    assert report.exit_code is ExitCode.CLEAN, [p.line() for p in report.problems]
    assert summary.read_text(encoding="utf-8") == before
    assert note.exists() and not renamed.exists(), "the note goes back to its name"
    assert env.git("status", "--porcelain") == ""

    # Renamed and edited in one go, then edited again: each edit reaches summary.md.
    note.rename(renamed)
    replace_text(renamed, "She is organised", "She is very organised")
    env.sync()
    assert "She is very organised" in summary.read_text(encoding="utf-8")
    replace_text(note, "very organised", "calm, organised")
    env.sync()
    assert summary.read_text(encoding="utf-8") == before.replace("She is organised", "She is calm, organised")


def test_two_notes_that_could_be_the_renamed_entity_note_are_reported(env: Env) -> None:
    summary = env.life / SARAH / "summary.md"
    before = summary.read_bytes()
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    text = note.read_bytes()
    note.unlink()
    for name in ("Sarah Chen.md", "Sarah.md"):
        (note.parent / name).write_bytes(text)

    report = env.sync()

    assert summary.read_bytes() == before
    assert (note.parent / "Sarah Chen.md").read_bytes() == text and (note.parent / "Sarah.md").read_bytes() == text
    said = warnings_about(report, SARAH_DIR)
    assert len(said) == 1 and "Sarah Chen.md, Sarah.md" in said[0] and "sarah-chen.md" in said[0], said


def test_a_scoped_pass_over_an_entity_and_a_daily_note_carries_both(env: Env) -> None:
    """Looking for a renamed entity note must not lose sight of the mirrored files the same pass reads."""
    env.sync()  # the copy's first pass is a full one; it records the snapshot a scoped pass starts from
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    replace_text(note, "She is organised", "She is very organised")
    daily = sorted((env.vault / "Daily").glob("*.md"))[-1]
    daily.write_bytes(daily.read_bytes() + b"- a line from the person\n")
    memory_daily = env.workspace / "memory" / daily.name

    report = env.sync()

    assert report.scoped, "this is what a scoped pass must carry"
    assert memory_daily.read_bytes() == daily.read_bytes()
    assert "She is very organised" in (env.life / SARAH / "summary.md").read_text(encoding="utf-8")


def test_ids_minted_in_one_batch_are_those_minted_one_by_one() -> None:
    from vaultsync.memory.identity import next_fact_id, next_fact_ids

    ids = ["sarah-chen-001", "sarah-chen-m001", "sarah-chen-003"]
    taken = [*ids, "SARAH-CHEN-005", "sarah-chen-004~2"]
    one_by_one: list[str] = []
    for _ in range(5):
        one_by_one.append(next_fact_id("sarah-chen", ids + one_by_one, taken + one_by_one))
    assert next_fact_ids("sarah-chen", ids, taken, 5) == one_by_one
    assert one_by_one == ["sarah-chen-004", "sarah-chen-006", "sarah-chen-007", "sarah-chen-008", "sarah-chen-009"]


def test_one_id_scheme_per_entity_whoever_adds_the_fact(env: Env) -> None:
    """A fact made in Obsidian and one made through the API both continue the entity's own ids (``f009`` ->
    ``f010`` -> ``f011``), instead of the person's getting ``<slug>-m001`` beside the agent's ``f010``."""
    from vaultsync.app.memory import remember

    env.agent_edit(
        SARAH, lambda facts: facts.append({"id": "f009", "fact": "Sarah Chen plays chess", "status": "active"})
    )
    env.sync()
    note = env.vault / SARAH_DIR / "facts" / "Untitled.md"
    note.write_text("Sarah Chen sails on weekends\n", encoding="utf-8")
    env.sync()
    assert ids(env)[-2:] == ["f009", "f010"]
    assert env.fact_note(SARAH_DIR, "f010").exists() and not note.exists()
    made = remember(env.cfg, SARAH, "Sarah Chen keeps bees")
    assert made.fact is not None and made.fact.id == "f011"
