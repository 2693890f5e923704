"""The shrink guard's pure rule (``core/shrink.py``): from decided units alone, which changes a pass holds.

Checked on the cases issue 47 names (MEMORY.md 70 -> 3 lines, four of five daily notes deleted, an entity's
facts emptied, a summary cut to one line, a person deleting the daily notes), on the bounds just at and just past
each limit, and by property: a held change is always a real loss past a bound on the side it names, growth is
never held, what a use case meant and what the person accepted never are, and the answer does not depend on the
order of the units.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.config import Layout, Safety
from vaultsync.core.merge import decide_all
from vaultsync.core.shrink import find_held, held_keys, lines
from vaultsync.core.world import World
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, fact_key, file_key
from vaultsync.model import EntityContent
from vaultsync.vault.layout import VaultLayout

LAYOUT = VaultLayout(Layout())
SAFETY = Safety()
SARAH = "areas/people/sarah"
DAYS = [f"workspace/memory/2026-01-{d:02d}.md" for d in range(1, 29)]


def text(n: int) -> bytes:
    return b"# Memory\n\n" + b"".join(b"- line %d\n" % i for i in range(n))


def summary(n: int) -> EntityContent:
    return EntityContent({}, "".join(f"Line {i}.\n" for i in range(n)))


def fact(i: int) -> dict[str, Any]:
    return {"id": f"f{i}", "fact": f"Fact {i}"}


def world_of(units: dict[str, tuple[str, Any, Any, Any]]) -> World:
    """A world of ``key -> (kind, base, memory, vault)``, decided as a pass decides it."""
    world = World()
    for key, (kind, base, memory, vault) in units.items():
        state = world.unit(key, kind)
        state.base, state.memory, state.vault = base, memory, vault
    decide_all(world)
    return world


def agent(units: dict[str, tuple[str, Any, Any]]) -> World:
    """The agent changed each unit (``key -> (kind, before, after)``); the vault still holds ``before``."""
    return world_of({k: (kind, before, after, before) for k, (kind, before, after) in units.items()})


def person(units: dict[str, tuple[str, Any, Any]]) -> World:
    return world_of({k: (kind, before, before, after) for k, (kind, before, after) in units.items()})


def held(world: World, **kwargs: Any) -> list[tuple[str, str, int, int, str]]:
    return [(h.path, h.writer, h.before, h.after, h.unit) for h in find_held(world, SAFETY, LAYOUT, **kwargs)]


def test_memory_md_cut_from_70_lines_to_3_is_held() -> None:
    world = agent({file_key("workspace/MEMORY.md"): (FILE, text(70), text(1))})
    assert held(world) == [("3 Resources/agent/MEMORY.md", "agent", 71, 2, "lines")]


def test_four_of_five_daily_notes_deleted_are_held_one_is_not() -> None:
    days = DAYS[:5]
    four = agent({file_key(d): (FILE, text(3), None) for d in days[:4]} | {file_key(days[4]): (FILE, text(3), text(3))})
    assert [h[0] for h in held(four)] == [f"Daily/{d.rpartition('/')[2]}" for d in days[:4]]
    one = agent({file_key(days[0]): (FILE, text(3), None)} | {file_key(d): (FILE, text(3), text(3)) for d in days[1:]})
    assert held(one) == []


def test_a_person_deleting_the_daily_notes_is_held_as_theirs() -> None:
    world = person({file_key(d): (FILE, text(2), None) for d in DAYS[:5]})
    assert {h[1] for h in held(world)} == {"person"} and len(held(world)) == 5


def test_an_entitys_facts_emptied_and_its_summary_cut_to_one_line_are_held() -> None:
    units = {fact_key(SARAH, f"f{i}"): (FACT, fact(i), None) for i in range(4)}
    units[entity_key(SARAH)] = (ENTITY, summary(5), summary(1))
    assert held(agent(units)) == [
        ("2 Areas/people/sarah", "agent", 4, 0, "facts"),
        ("2 Areas/people/sarah", "agent", 5, 1, "lines"),
    ]


def test_a_whole_entity_deleted_is_judged_by_the_many_deletions_bound_alone() -> None:
    def gone(n: int) -> World:
        units: dict[str, tuple[str, Any, Any]] = {}
        for e in range(n):
            rel = f"areas/people/p{e}"
            units[entity_key(rel)] = (ENTITY, summary(5), None)
            units |= {fact_key(rel, f"f{i}"): (FACT, fact(i), None) for i in range(3)}
        kept = {fact_key("areas/people/keep", f"f{i}"): (FACT, fact(i), fact(i)) for i in range(40)}
        return agent(units | kept)

    assert held(gone(1)) == []  # 4 units: not more than max_delete_count
    assert held(gone(2)) == []  # 8 of 48 units: more than 5, but not more than a quarter (12)
    lots = held(gone(4))  # 16 of 56: more than 5 and more than a quarter (14)
    assert [h[0] for h in lots] == [f"2 Areas/people/p{e}" for e in range(4)]
    assert all(h[4] == "facts" and h[2:4] == (3, 0) for h in lots)


def test_the_bounds_are_strict_and_come_from_the_settings() -> None:
    at = agent({file_key("workspace/MEMORY.md"): (FILE, text(9), text(4))})  # 10 lines -> 5: exactly half
    assert held(at) == []
    past = agent({file_key("workspace/MEMORY.md"): (FILE, text(9), text(3))})  # 10 -> 4
    assert len(held(past)) == 1
    loose = Safety(max_shrink_share=0.9)
    assert find_held(past, loose, LAYOUT) == []
    short = agent({file_key("workspace/MEMORY.md"): (FILE, b"a\nb\nc\n", b"a\n")})  # under min_lines
    assert held(short) == []


def test_what_a_use_case_meant_and_what_the_person_accepted_are_not_held() -> None:
    key = file_key("workspace/MEMORY.md")
    world = agent({key: (FILE, text(70), text(1))})
    assert held(world, meant={key}) == []
    assert held(world, accepted={"3 Resources/agent/MEMORY.md"}) == []
    assert held(world, accepted={"MEMORY.md"}) == []
    assert held(world, accepted={"all"}) == []
    assert len(held(world, accepted={"Daily/2026-01-01.md"})) == 1


def test_other_files_emptied_on_purpose_are_never_held() -> None:
    """HEARTBEAT.md is cleared by agents every day; a daily note rewritten shorter is a day's work."""
    world = agent(
        {
            file_key("workspace/HEARTBEAT.md"): (FILE, text(40), b""),
            file_key(DAYS[0]): (FILE, text(40), text(1)),
        }
    )
    assert held(world) == []


SIZES = st.integers(min_value=0, max_value=30)


@st.composite
def changes(draw: st.DrawFn) -> dict[str, tuple[str, Any, Any, Any]]:
    """A random pass: curated files, daily notes, an entity's facts and summary, each changed by one side (or
    neither), to a random size, or deleted."""
    units: dict[str, tuple[str, Any, Any, Any]] = {}

    def side_change(before: Any, after: Any) -> tuple[Any, Any, Any]:
        who = draw(st.sampled_from(["agent", "person", "none"]))
        if who == "agent":
            return before, after, before
        if who == "person":
            return before, before, after
        return before, before, before

    for path in ("workspace/MEMORY.md", "workspace/USER.md"):
        before, after = draw(SIZES), draw(st.one_of(st.none(), SIZES))
        units[file_key(path)] = (FILE, *side_change(text(before), None if after is None else text(after)))
    for day in DAYS[: draw(st.integers(0, 8))]:
        units[file_key(day)] = (FILE, *side_change(text(2), draw(st.sampled_from([None, text(2), text(4)]))))
    facts = draw(st.integers(0, 8))
    for i in range(facts):
        units[fact_key(SARAH, f"f{i}")] = (FACT, *side_change(fact(i), draw(st.sampled_from([None, fact(i)]))))
    units[entity_key(SARAH)] = (ENTITY, *side_change(summary(draw(SIZES)), summary(draw(SIZES))))
    return units


@settings(max_examples=300, deadline=None)
@given(changes(), st.randoms(use_true_random=False))
def test_a_held_change_is_a_real_loss_past_a_bound_on_the_side_it_names(
    units: dict[str, tuple[str, Any, Any, Any]], rng: Any
) -> None:
    world = world_of(units)
    found = find_held(world, SAFETY, LAYOUT)
    for key, side in held_keys(found).items():
        state = world.units[key]
        assert state.base is not None
        after = getattr(state, side)
        other = state.vault if side == "memory" else state.memory
        assert other == state.base, f"{key}: held, but the other side changed it too"
        if after is not None:
            assert lines(after) < lines(state.base) * (1 - SAFETY.max_shrink_share) or state.kind == FACT, key
    for h in found:
        assert h.after <= h.before and h.writer == {"memory": "agent", "vault": "person"}[h.side]
    # Growth and unchanged units are never held.
    for key, state in world.units.items():
        values = [v for v in (state.memory, state.vault) if v is not None]
        if state.base is not None and len(values) == 2 and all(lines(v) >= lines(state.base) for v in values):
            assert key not in held_keys(found) or state.kind == FACT
    # Nothing accepted, nothing meant, is held; and the answer does not depend on the units' order.
    assert find_held(world, SAFETY, LAYOUT, accepted={"all"}) == []
    assert find_held(world, SAFETY, LAYOUT, meant=set(world.units)) == []
    keys = list(units)
    rng.shuffle(keys)
    assert find_held(world_of({k: units[k] for k in keys}), SAFETY, LAYOUT) == found
