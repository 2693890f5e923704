"""Entity folders a person moved or renamed in the vault, carried over to life/ as a folder move.

Without this, moving ``2 Areas/people/sarah`` to ``4 Archives/people/sarah`` would read as "every fact of
Sarah deleted, a new Sarah created": the agent's folder would be emptied and rebuilt, and any fact the agent
changed meanwhile would conflict. Detecting the move keeps every unit's identity, so the pass only renames.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from vaultsync.core.plan import Action, Plan
from vaultsync.keys import entity_key, facts_of, file_key, is_fact, is_file, mem_path_of, rel_of, split_fact_key
from vaultsync.memory.tree import MemoryScan
from vaultsync.names import composed
from vaultsync.state.entry import BaseEntry
from vaultsync.state.stat_walk import MemoryWalk
from vaultsync.vault.layout import slug_of
from vaultsync.vault.scan import VaultScan


def _base_rels(base: Iterable[str]) -> set[str]:
    rels = set()
    for key in base:
        if not is_file(key):
            rels.add(rel_of(key))
    return rels


def detect_moves(mem: MemoryScan, vault: VaultScan, base: dict[str, BaseEntry]) -> list[tuple[str, str]]:
    """(old rel, new rel) pairs: a synced entity gone from its vault folder and a new one that holds its facts.

    A move is taken only when the memory side still has the entity where it was and nothing at the new
    place, and the match is unambiguous (``pair_moves``).
    """
    known = _base_rels(base)
    gone = [r for r in known if r not in vault.entities and r in mem.entities]
    fresh = [r for r in vault.entities if r not in known and r not in mem.entities]
    if not gone or not fresh:
        return []
    return pair_moves(base_notes(base, gone), {r: set(vault.entities[r].facts) for r in fresh})


def base_notes(keys: Iterable[str], rels: Iterable[str]) -> dict[str, set[str]]:
    """The fact note names the base knows for each entity of ``rels``."""
    notes: dict[str, set[str]] = {r: set() for r in rels}
    for key in keys:
        if is_fact(key):
            rel, note = split_fact_key(key)
            if rel in notes:
                notes[rel].add(note)
    return notes


def pair_moves(gone: Mapping[str, set[str]], fresh: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """(old rel, new rel) pairs from the fact note names of the entities gone from the vault and of the new ones.

    First the same folder name (with a shared fact, or no facts to compare), then, for a folder renamed as
    well, most of the same fact notes. The folder name goes first because agents that number each entity's
    facts (``f001``) give every entity the same note names: moving a whole kind folder (``people`` to
    ``contacts``) must not make each of its entities ambiguous. Names are compared composed (NFC): a sync app
    from macOS decomposes them.
    """
    olds = sorted(gone)
    by_slug: dict[str, list[str]] = {}
    for old in olds:
        by_slug.setdefault(composed(slug_of(old)), []).append(old)
    gone = {rel: {composed(n) for n in notes} for rel, notes in gone.items()}
    fresh = {rel: {composed(n) for n in notes} for rel, notes in fresh.items()}
    moves: dict[str, str] = {}
    taken: set[str] = set()
    for new in sorted(fresh):
        named = [old for old in by_slug.get(composed(slug_of(new)), []) if _shares(gone[old], fresh[new])]
        if len(named) == 1 and named[0] not in taken:
            moves[new] = named[0]
            taken.add(named[0])
    for new in sorted(fresh):
        if new not in moves:
            matches = [old for old in olds if old not in taken and _mostly(gone[old], fresh[new])]
            if len(matches) == 1:
                moves[new] = matches[0]
                taken.add(matches[0])
    return sorted(((old, new) for new, old in moves.items()), key=lambda move: move[1])


def _shares(old_notes: set[str], new_notes: set[str]) -> bool:
    """At least one fact note in common, or no facts on one side to compare."""
    return not old_notes or not new_notes or not old_notes.isdisjoint(new_notes)


def _mostly(old_notes: set[str], new_notes: set[str]) -> bool:
    return bool(old_notes) and len(old_notes & new_notes) * 2 > len(old_notes)


def _mover(path: str, olds: Mapping[str, str]) -> str | None:
    """The moved entity ``path`` (relative to life/) lies in, if any: each of its leading folders looked up."""
    end = path.find("/")
    while end != -1:
        if path[:end] in olds:
            return path[:end]
        end = path.find("/", end + 1)
    return None


def _moved_key(key: str, old: str, new: str) -> str:
    if key == entity_key(old):
        return entity_key(new)
    for before, after in ((facts_of(old), facts_of(new)), (file_key(f"life/{old}/"), file_key(f"life/{new}/"))):
        if key.startswith(before):
            return after + key[len(before) :]
    return key


def _key_rel(key: str, olds: Mapping[str, str]) -> str | None:
    """The moved entity a base key belongs to, if any."""
    if not is_file(key):
        rel = rel_of(key)
        return rel if rel in olds else None
    path = mem_path_of(key)
    return _mover(path.removeprefix("life/"), olds) if path.startswith("life/") else None


def apply_moves(
    moves: list[tuple[str, str]], mem: MemoryScan, base: dict[str, BaseEntry], life: Path
) -> dict[str, str]:
    """Re-key the memory scan and the base as if the folders had already moved; returns new key -> old key.

    Each file and key is looked up by its folders, once: a kind folder renamed moves thousands of entities.
    """
    olds = dict(moves)
    renamed: dict[str, str] = {}
    for old, new in moves:
        entity = mem.entities.pop(old)
        mem.entities[new] = replace(entity, rel=new, folder=life / new)
    for mem_path in [p for p in mem.files if p.startswith("life/")]:
        old = _mover(mem_path.removeprefix("life/"), olds)
        if old is not None:
            moved = mem.files.pop(mem_path)
            new_path = f"life/{olds[old]}/{mem_path[len(f'life/{old}/') :]}"
            mem.files[new_path] = replace(moved, mem_path=new_path, path=life / new_path.removeprefix("life/"))
    for key in list(base):
        old = _key_rel(key, olds)
        if old is not None:
            new_key = _moved_key(key, old, olds[old])
            base[new_key] = base.pop(key)
            renamed[new_key] = key
    return renamed


def moved_walk(walk: MemoryWalk, moves: list[tuple[str, str]]) -> MemoryWalk:
    """The memory walk as it would have found the tree after ``moves``: a folder renamed keeps its files' inodes,
    sizes and times, so their stats hold at the new place. A file the walk found too fresh to trust is left
    out; the next quick check reads it as new, which costs a scoped pass, never a missed change."""
    if not moves:
        return walk
    olds = dict(moves)
    entries = {}
    for key, entry in walk.entries.items():
        moved = _moved_path(key, olds)
        if moved == key:
            entries[key] = entry
        elif entry is not None:
            entries[moved] = entry
    return MemoryWalk(walk.started_ns, entries)


def _moved_path(path: str, olds: Mapping[str, str]) -> str:
    if not path.startswith("life/"):
        return path
    old = _mover(path.removeprefix("life/"), olds)
    return path if old is None else f"life/{olds[old]}/{path[len(f'life/{old}/') :]}"


def plan_moves(
    plan: Plan, moves: list[tuple[str, str]], renamed: dict[str, str], base: dict[str, BaseEntry], life: Path
) -> None:
    """Carry the person's folder moves over to life/ first, and re-key their units in the base."""
    for old, new in moves:
        keys = tuple(k for k in renamed if k.startswith(facts_of(new)) or k == entity_key(new))
        plan.actions.insert(
            0, Action("memory", "move", life / old, f"life/{old} -> life/{new}", keys=keys, dest=life / new)
        )
    for new_key, old_key in renamed.items():
        plan.deletes.append(old_key)
        if new_key not in plan.upserts and new_key not in plan.deletes:
            plan.upserts[new_key] = base[new_key]
