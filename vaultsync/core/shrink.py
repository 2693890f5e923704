"""The shrink guard: which changes a pass holds back because one side lost too much at once.

An agent's consolidation (nightly dreaming, a "tidy memory" skill) or a slip in Obsidian can cut MEMORY.md to a
few lines, delete most daily notes or empty an entity, and a pass would carry that to the other side, where the
person's copy is the last one left outside git. This module decides, from the decided units alone (no file, no
clock), which of those changes to hold: a held unit is left as it is on both sides, so the side that did not
shrink keeps its copy, while everything else in the pass syncs. The engine applies the answer
(``engine/prepare.py``); ``vaultsync accept`` lets a held change through, ``vaultsync restore`` puts the last good
version back.

The bounds (``[safety]`` in the config, documented in docs/safety.md):

- many deletions: more than ``max_delete_count`` units and more than ``max_delete_share`` of one side's units
  deleted by one pass (the old mass-delete stop, now a hold of those deletions);
- daily notes: more than ``max_daily_deletes`` daily notes deleted on one side;
- curated text: MEMORY.md, USER.md or an entity summary of at least ``min_lines`` lines keeping fewer than
  ``1 - max_shrink_share`` of them (deleting such a file counts as keeping none);
- facts: an entity that lives on, of at least ``min_facts`` facts, losing more than ``max_shrink_share`` of them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial

from vaultsync.config import Safety
from vaultsync.core.decide import UNKNOWN, Outcome
from vaultsync.core.world import UnitState, World
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, is_fact, is_file, mem_path_of, rel_of, scope_of
from vaultsync.model import EntityContent, Held
from vaultsync.names import daily_date
from vaultsync.vault.layout import VaultLayout

CURATED = ("MEMORY.md", "USER.md")  # file names whose text the person curates with the agent
WRITERS = {"memory": "agent", "vault": "person"}
OTHER = {"memory": "vault", "vault": "memory"}
Place = Callable[[str], str]  # unit key -> the vault path a held change is named by


def find_held(
    world: World,
    safety: Safety,
    layout: VaultLayout,
    meant: Collection[str] = (),
    accepted: Collection[str] = (),
    unread: int = 0,
) -> list[Held]:
    """The changes of ``world``'s decided units to hold, each named once, sorted by path.

    ``layout`` names each held change by its vault path. ``meant``: keys a use case changed on purpose (the
    janitor's archived daily notes, retention moves), never held. ``accepted``: paths or scopes the person let
    through (``all`` for every one). ``unread``: units a scoped pass did not read, counted in a side's total.
    """
    place = partial(_place, layout)
    found: list[Held] = []
    found += _curated(world, safety, place)
    found += _facts(world, safety, place)
    found += _dailies(world, safety, place, meant)
    taken = {k for h in found for k in h.keys}
    found += _many(world, safety, place, meant, taken, unread)
    kept = [h for h in found if not _accepted(h, accepted) and not set(h.keys) <= set(meant)]
    return sorted(kept, key=lambda h: (h.path, h.side, h.unit))


def too_many(count: int, total: int, safety: Safety) -> bool:
    """Whether ``count`` deletions out of a side's ``total`` units are "many": more than both bounds allow."""
    return count > safety.max_delete_count and count > safety.max_delete_share * total


def held_keys(held: Collection[Held]) -> dict[str, str]:
    """Each held unit key -> the side whose change is held."""
    return {key: h.side for h in held for key in h.keys}


def lines(value: object) -> int:
    """The non-blank lines of a file's bytes or a summary's body: what "losing most of its lines" counts."""
    if isinstance(value, EntityContent):
        text = value.body
    elif isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    else:
        return 0
    return sum(1 for line in text.splitlines() if line.strip())


def changed_sides(state: UnitState) -> list[str]:
    """The sides whose change a decided unit carries to the other: none for a unit left alone or agreed on."""
    decision = state.decision
    if decision is None:
        return []
    outcome = decision.outcome
    if outcome is Outcome.TO_VAULT:
        return ["memory"]
    if outcome is Outcome.TO_MEMORY:
        return ["vault"]
    if outcome in (Outcome.MERGED, Outcome.CONFLICT):
        return ["memory", "vault"]
    return []


def _value(state: UnitState, side: str) -> object:
    value = getattr(state, side)
    return None if value is UNKNOWN else value


def _curated(world: World, safety: Safety, place: Place) -> list[Held]:
    """MEMORY.md, USER.md and entity summaries cut past the bound, or deleted."""
    found = []
    for key, state in world.units.items():
        if state.kind == FILE and mem_path_of(key).rpartition("/")[2] not in CURATED:
            continue
        if state.kind == FACT or state.base is None:
            continue
        if state.kind == ENTITY and state.decision is not None and state.decision.result is None:
            continue  # a whole entity deleted: the many-deletions bound judges that
        before = lines(state.base)
        if before < safety.min_lines:
            continue
        for side in changed_sides(state):
            after = lines(_value(state, side))
            if after < before * (1 - safety.max_shrink_share):
                what = "summary" if state.kind == ENTITY else "file"
                rule = f"deleted the {what}" if _value(state, side) is None else f"cut the {what}"
                found.append(_held(key, side, before, after, "lines", rule, place, (key,)))
    return found


def _facts(world: World, safety: Safety, place: Place) -> list[Held]:
    """An entity that lives on losing most of its facts on one side."""
    by_entity: dict[tuple[str, str], list[str]] = {}
    total: dict[str, int] = {}
    for key, state in world.units.items():
        if not is_fact(key) or state.base is None:
            continue
        rel = rel_of(key)
        total[rel] = total.get(rel, 0) + 1
        for side in changed_sides(state):
            if _value(state, side) is None:
                by_entity.setdefault((rel, side), []).append(key)
    found = []
    for (rel, side), keys in sorted(by_entity.items()):
        entity = world.units.get(entity_key(rel))
        if entity is not None and entity.decision is not None and entity.decision.result is None:
            continue  # the entity itself goes: the many-deletions bound judges that
        before = total[rel]
        if before >= safety.min_facts and len(keys) > before * safety.max_shrink_share:
            after = before - len(keys)
            lead = entity_key(rel)
            found.append(_held(lead, side, before, after, "facts", "removed most facts", place, tuple(sorted(keys))))
    return found


def daily_deletions(world: World, meant: Collection[str] = ()) -> tuple[dict[str, list[str]], int]:
    """The daily notes each side deleted (but those ``meant``), and how many synced daily notes ``world`` holds:
    a pass in batches adds them up over its batches."""
    gone: dict[str, list[str]] = {"memory": [], "vault": []}
    total = 0
    for key, state in world.units.items():
        if state.kind != FILE or state.base is None or not daily_date(mem_path_of(key).rpartition("/")[2]):
            continue
        total += 1
        for side in changed_sides(state):
            if _value(state, side) is None and key not in meant:
                gone[side].append(key)
    return gone, total


def _dailies(world: World, safety: Safety, place: Place, meant: Collection[str]) -> list[Held]:
    """More daily notes deleted on one side than a day's work deletes."""
    gone, total = daily_deletions(world, meant)
    found = []
    for side, keys in gone.items():
        if len(keys) > safety.max_daily_deletes:
            for key in keys:
                state = world.units[key]
                rule = f"deleted {len(keys)} of {total} daily notes, this one among them"
                found.append(_held(key, side, lines(state.base), 0, "lines", rule, place, (key,)))
    return found


def _many(
    world: World,
    safety: Safety,
    place: Place,
    meant: Collection[str],
    taken: set[str],
    unread: int,
) -> list[Held]:
    """More units deleted on one side than both ``max_delete_count`` and ``max_delete_share`` allow: each
    deletion is held, under its entity (all its units at once) or its file."""
    total = {"memory": unread, "vault": unread}
    doomed: dict[str, list[str]] = {"memory": [], "vault": []}
    for key, state in world.units.items():
        if state.decision is None:
            continue
        for side in ("memory", "vault"):
            if getattr(state, side) is not None and getattr(state, side) is not UNKNOWN:
                total[side] += 1
        if state.decision.result is None and key not in meant:
            for side in changed_sides(state):
                doomed[side].append(key)
    found = []
    for side, keys in doomed.items():
        count, losing = len(keys), total[OTHER[side]]  # counted on the side that would lose them
        if not too_many(count, losing, safety):
            continue
        groups: dict[str, list[str]] = {}
        for key in keys:
            if key not in taken:
                groups.setdefault(rel_of(key) or key, []).append(key)
        rule = f"deleted {count} of {losing} units at once, this among them"
        for group, members in sorted(groups.items()):
            facts = sum(1 for k in members if is_fact(k))
            lead = group if group in members else entity_key(group)  # a mirrored file, or a whole entity
            state = world.units.get(lead)
            size, unit = (facts, "facts") if facts else (lines(state.base if state else None), "lines")
            found.append(_held(lead, side, size, 0, unit, rule, place, tuple(sorted(members))))
    return found


def _held(
    key: str,
    side: str,
    before: int,
    after: int,
    unit: str,
    rule: str,
    place: Place,
    keys: tuple[str, ...],
) -> Held:
    path = place(key) or scope_of(key)
    return Held(path, scope_of(key), WRITERS[side], side, before, after, unit, rule, keys)


def _place(layout: VaultLayout, key: str) -> str:
    """The vault path a held change is named by: an entity's folder, a file's note."""
    if is_file(key):
        return layout.file_note(mem_path_of(key)) or ""
    return layout.entity_dir(rel_of(key))


def _accepted(held: Held, accepted: Collection[str]) -> bool:
    if "all" in accepted:
        return True
    return any(a.strip("/") in (held.path, held.scope) for a in accepted)
