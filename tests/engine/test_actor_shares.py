"""The agent commit of a pass split by actor (``engine/actors.py``): every note in exactly one commit, the
agent's first, a recorded fact's note in its maker's commit and nowhere else, and with no record the one commit
of today."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vaultsync.config import Layout
from vaultsync.engine.actors import carried, shares
from vaultsync.keys import entity_key, fact_key, file_key
from vaultsync.model import AGENT, PERSON, Actor, SideChange, client
from vaultsync.vault.layout import VaultLayout

LAYOUT = VaultLayout(Layout())
ENTITIES = ["areas/people/sarah", "areas/people/miguel", "projects/atlas"]
ACTORS = [AGENT, PERSON, client("openclaw", "main", "s-1"), client("openclaw", "work")]


def _units() -> st.SearchStrategy[str]:
    fact = st.builds(fact_key, st.sampled_from(ENTITIES), st.sampled_from(["f-1", "f-2", "f-3"]))
    entity = st.builds(entity_key, st.sampled_from(ENTITIES))
    daily = st.builds(lambda d: file_key(f"workspace/memory/2026-12-0{d}.md"), st.integers(1, 3))
    return st.one_of(fact, entity, daily, st.just(file_key("workspace/MEMORY.md")))


@given(
    st.sets(_units(), max_size=12),
    st.dictionaries(_units(), st.sampled_from(ACTORS), max_size=5),
    st.sets(_units(), max_size=6),
)
def test_each_note_goes_to_one_commit_and_a_recorded_unit_to_its_maker(
    written: set[str], recorded: dict[str, Actor], changed: set[str]
) -> None:
    paths = {LAYOUT.note_for_key(key): key for key in written}
    changes = [(key, SideChange("memory", "s", "edited")) for key in sorted(changed)]
    split = shares(LAYOUT, recorded, AGENT, set(paths), changes, [])

    everywhere = [path for share in split for path in share.paths]
    assert sorted(everywhere) == sorted(paths)
    assert len({share.actor for share in split}) == len(split)
    kinds = [share.actor.kind for share in split]
    assert kinds == sorted(kinds, key=lambda kind: (kind != "agent", kind != "person"))
    assert sum(len(share.changes) for share in split) == len(changes)
    for share in split:
        for path in share.paths:
            if paths[path] in recorded:
                assert share.actor == recorded[paths[path]]
    assert set(carried(LAYOUT, recorded, set(paths), changes)) <= set(recorded)


@given(st.sets(_units(), min_size=1, max_size=12))
def test_without_a_record_there_is_one_commit_as_today(written: set[str]) -> None:
    paths = {LAYOUT.note_for_key(key) for key in written}
    (only,) = shares(LAYOUT, {}, PERSON, paths, [], ["people/sarah"])
    assert only.actor == PERSON and only.paths == paths and only.touched == ["people/sarah"]


def test_notes_map_back_to_their_units() -> None:
    for key in (fact_key("areas/people/sarah", "f-1"), entity_key("projects/atlas"), file_key("workspace/MEMORY.md")):
        assert LAYOUT.unit_of_note(LAYOUT.note_for_key(key)) == key
    copy = "2 Areas/people/sarah/facts/f-1.vaultsync-conflict-20261201-093000.md"
    assert LAYOUT.unit_of_note(copy) == fact_key("areas/people/sarah", "f-1")
    assert LAYOUT.unit_of_note("Daily/2026-12-01.md") == file_key("workspace/memory/2026-12-01.md")
