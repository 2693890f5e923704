"""Entity folders a person moved or renamed in the vault, carried over to life/ as a folder move.

Without this, moving ``2 Areas/people/sarah`` to ``4 Archives/people/sarah`` would read as "every fact of
Sarah deleted, a new Sarah created": the agent's folder would be emptied and rebuilt, and any fact the agent
changed meanwhile would conflict. Detecting the move keeps every unit's identity, so the pass only renames.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from vaultsync.memory.tree import MemoryScan
from vaultsync.sync.base import BaseEntry
from vaultsync.sync.snapshot import MemoryWalk
from vaultsync.vault.layout import slug_of
from vaultsync.vault.scan import VaultScan


def _base_rels(base: Iterable[str]) -> set[str]:
    rels = set()
    for key in base:
        if key.startswith("entity:"):
            rels.add(key[len("entity:") :])
        elif key.startswith("fact:"):
            rels.add(key[len("fact:") :].partition("#")[0])
    return rels


def detect_moves(mem: MemoryScan, vault: VaultScan, base: dict[str, BaseEntry]) -> list[tuple[str, str]]:
    """(old rel, new rel) pairs: a synced entity gone from its vault folder and a new one that holds its facts.

    A move is taken only when the memory side still has the entity where it was and nothing at the new
    place, and the match is unambiguous: the same folder name, or most of the same fact notes.
    """
    known = _base_rels(base)
    gone = sorted(r for r in known if r not in vault.entities and r in mem.entities)
    fresh = sorted(r for r in vault.entities if r not in known and r not in mem.entities)
    if not gone or not fresh:
        return []
    base_notes = {r: {k.partition("#")[2] for k in base if k.startswith(f"fact:{r}#")} for r in gone}
    moves = []
    taken: set[str] = set()
    for new in fresh:
        notes = set(vault.entities[new].facts)
        matches = [old for old in gone if old not in taken and _same_entity(old, new, base_notes[old], notes)]
        if len(matches) == 1:
            moves.append((matches[0], new))
            taken.add(matches[0])
    return moves


def _same_entity(old: str, new: str, old_notes: set[str], new_notes: set[str]) -> bool:
    """Same folder name and at least one shared fact (or no facts to compare), or most facts shared."""
    shared = len(old_notes & new_notes)
    if slug_of(old) == slug_of(new) and (shared or not old_notes or not new_notes):
        return True
    return bool(old_notes) and shared * 2 > len(old_notes)


def _moved_key(key: str, old: str, new: str) -> str:
    if key == f"entity:{old}":
        return f"entity:{new}"
    for before, after in ((f"fact:{old}#", f"fact:{new}#"), (f"file:life/{old}/", f"file:life/{new}/")):
        if key.startswith(before):
            return after + key[len(before) :]
    return key


def apply_moves(
    moves: list[tuple[str, str]], mem: MemoryScan, base: dict[str, BaseEntry], life: Path
) -> dict[str, str]:
    """Re-key the memory scan and the base as if the folders had already moved; returns new key -> old key."""
    renamed: dict[str, str] = {}
    for old, new in moves:
        entity = mem.entities.pop(old)
        mem.entities[new] = replace(entity, rel=new, folder=life / new)
        for mem_path in [p for p in mem.files if p.startswith(f"life/{old}/")]:
            moved = mem.files.pop(mem_path)
            new_path = f"life/{new}/{mem_path[len(f'life/{old}/') :]}"
            mem.files[new_path] = replace(moved, mem_path=new_path, path=life / new_path.removeprefix("life/"))
        for key in [k for k in base if _moved_key(k, old, new) != k]:
            new_key = _moved_key(key, old, new)
            base[new_key] = base.pop(key)
            renamed[new_key] = key
    return renamed


def moved_walk(walk: MemoryWalk, moves: list[tuple[str, str]]) -> MemoryWalk:
    """The memory walk as it would have found the tree after ``moves``: a folder renamed keeps its files' inodes,
    sizes and times, so their stats hold at the new place. A file the walk found too fresh to trust is left
    out; the next quick check reads it as new, which costs a scoped pass, never a missed change."""
    if not moves:
        return walk
    entries = {}
    for key, entry in walk.entries.items():
        moved = _moved_path(key, moves)
        if moved == key:
            entries[key] = entry
        elif entry is not None:
            entries[moved] = entry
    return MemoryWalk(walk.started_ns, entries)


def _moved_path(path: str, moves: list[tuple[str, str]]) -> str:
    for old, new in moves:
        prefix = f"life/{old}/"
        if path.startswith(prefix):
            return f"life/{new}/{path[len(prefix) :]}"
    return path
