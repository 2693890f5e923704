"""What a full pass in batches (``batched.py``) is made of, shared by its two walks: a batch (the entities and
files it holds, how it is read and decided, the fingerprint that tells whether it read the same in both walks,
its notes' blob ids as it leaves them) and what the first walk keeps for the second (``FirstWalk``).

The batches are cut from both trees' listings, none read: only what a side lists is read on that side, so a
batch reads what a full scan would, and a folder the person moved is read with the place it left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from vaultsync.core.guard import Tally
from vaultsync.core.merge import decide_all
from vaultsync.core.moves import apply_moves, base_notes, pair_moves
from vaultsync.core.plan import Action
from vaultsync.core.scope import Names
from vaultsync.core.units import World, gather
from vaultsync.engine.first_import import FILES_PER_ENTITY
from vaultsync.engine.prepare import PassContext, hold_moved
from vaultsync.git.index import blob_id
from vaultsync.keys import is_file, mem_path_of, rel_of
from vaultsync.memory.sizes import scanned_size_problems
from vaultsync.memory.tree import MemoryListing, MemoryScan, scan_memory_scope
from vaultsync.model import Problem, SideChange
from vaultsync.state.base import BaseEntry
from vaultsync.vault.scan import VaultListing, VaultScan, scan_vault_scope


@dataclass(frozen=True)
class Batch:
    """Entities and files to read together: on each side, those that side lists; in the base, their units."""

    rels: list[str]
    files: list[str]  # memory paths
    keys: list[str]
    memory: tuple[list[str], list[str]]  # (entities, files) the memory lists
    vault: tuple[list[str], list[str]]  # those the vault lists
    moves: list[tuple[str, str]] = field(default_factory=list)  # (old rel, new rel): folder moves, both here

    @property
    def size(self) -> int:
        return len(self.rels) + len(self.files)


@dataclass
class Read:
    """A batch as read and decided."""

    base: dict[str, BaseEntry]
    mem: MemoryScan
    vault: VaultScan
    world: World
    moves: list[tuple[str, str]]
    renamed: dict[str, str]

    def mark(self, own: dict[str, Names], notes: list[str], deleted: list[str], paths: set[str]) -> int:
        """What of this batch the rest of the pass depends on, in one number, to tell whether it read the same
        the second time: its entities' names, its notes, its deletions and the person's changes."""
        return hash((tuple(sorted(own.items())), tuple(notes), tuple(deleted), tuple(sorted(paths))))


@dataclass
class FirstWalk:
    """What the first walk keeps for the rest of the pass."""

    names: dict[str, Names] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    tally: Tally = field(default_factory=Tally)
    person_changes: list[tuple[str, SideChange]] = field(default_factory=list)  # with their keys (``keyed_changes``)
    person_paths: set[str] = field(default_factory=set)
    unchanged: dict[str, tuple[str, str]] = field(default_factory=dict)  # notes perhaps saved again (``resaved``)
    moves: list[tuple[str, str]] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)
    settled: dict[int, Settled] = field(default_factory=dict)  # batches the first walk found nothing to do in


@dataclass
class Settled:
    """A batch the first walk planned against the names and note names the last pass left, and found nothing to
    write in: what the rest of the pass needs of it, when those names turn out to be the final ones."""

    blobs: dict[str, str]
    reads: dict[str, bytes]
    foreign: list[str]
    problems: list[Problem]


def read_batch(setting: PassContext, earlier: set[str], batch: Batch) -> Read:
    """Read ``batch`` on both sides and in the base, pair its folder moves and decide its units; ``earlier``:
    the notes listed as uncommitted when the pass began."""
    cfg, layout, store = setting.cfg, setting.layout, setting.store
    mem = scan_memory_scope(cfg.workspace, cfg.life, *batch.memory)
    mem.problems += scanned_size_problems(mem.files, cfg.janitor)
    vault = scan_vault_scope(cfg.vault, layout, *batch.vault)
    base = store.load(batch.keys)
    # As the listing paired them, while both ends still are what a move needs (``detect_moves``).
    moves = [(old, new) for old, new in batch.moves if old in mem.entities and new not in mem.entities]
    moves = [(old, new) for old, new in moves if old not in vault.entities and new in vault.entities]
    renamed = apply_moves(moves, mem, base, cfg.life)
    world = gather(mem, vault, base, layout, store.ids(batch.rels), setting.today, earlier)
    hold_moved(cfg, layout, world)
    decide_all(world)
    return Read(base, mem, vault, world, moves, renamed)


def note_blobs(scanned: Read, done: list[Action]) -> dict[str, str]:
    """The blob id of every note of the batch as it leaves it: as read, then as written (deletions gone)."""
    notes = {n.path: n.raw for n in scanned.vault.files.values()}
    for entity in scanned.vault.entities.values():
        notes |= {n.path: n.raw for n in entity.facts.values()}
        if entity.note:
            notes[entity.note.path] = entity.note.raw
    for action in done:
        if action.side == "vault":
            if action.op == "write" and action.data is not None:
                notes[action.shown] = action.data
            else:
                notes.pop(action.shown, None)
    return {path: blob_id(data) for path, data in notes.items()}


def cut_batches(
    listing: MemoryListing,
    listed: VaultListing,
    keys: list[str],
    size: int,
    fact_notes: Callable[[list[str]], dict[str, set[str]]],
) -> Iterator[Batch]:
    """The entities a full scan would read, ``size`` at a time, then the files, ten times as many at a time.

    Only what a side lists is read on that side, so a batch reads what a full scan would. Folder moves come
    first: an entity gone from the vault (but in memory and the base) and a new one in the vault only are
    paired from the fact note names the base and ``fact_notes`` list, as a whole pass pairs them, and each
    pair is read in one batch; a kind folder renamed in Obsidian moves thousands of entities at once.
    """
    by_rel: dict[str, list[str]] = {}
    by_file: dict[str, str] = {}
    for key in keys:
        if is_file(key):
            by_file[mem_path_of(key)] = key
        else:
            by_rel.setdefault(rel_of(key), []).append(key)
    in_mem, in_vault, in_files, in_notes = set(listing.rels), set(listed.rels), set(listing.files), set(listed.files)
    rels = sorted(in_mem | in_vault | set(by_rel), key=lambda rel: rel.split("/"))
    gone = [r for r in rels if r in by_rel and r in in_mem and r not in in_vault]
    fresh = [r for r in rels if r in in_vault and r not in by_rel and r not in in_mem]
    moves = pair_moves(base_notes(keys, gone), fact_notes(fresh)) if gone and fresh else []

    def batch(chosen: list[str], files: list[str], moved: list[tuple[str, str]]) -> Batch:
        keys = [k for r in chosen for k in by_rel.get(r, [])] + [by_file[f] for f in files if f in by_file]
        memory = [r for r in chosen if r in in_mem], [f for f in files if f in in_files]
        vault = [r for r in chosen if r in in_vault], [f for f in files if f in in_notes]
        return Batch(chosen, files, keys, memory, vault, moved)

    step = max(1, size // 2)
    for i in range(0, len(moves), step):
        pairs = moves[i : i + step]
        yield batch(sorted({r for pair in pairs for r in pair}, key=lambda rel: rel.split("/")), [], pairs)
    paired = {r for pair in moves for r in pair}
    rest = [r for r in rels if r not in paired]
    for i in range(0, len(rest), size):
        yield batch(rest[i : i + size], [], [])
    files = sorted(in_files | in_notes | set(by_file))
    step = size * FILES_PER_ENTITY
    for i in range(0, len(files), step):
        yield batch([], files[i : i + step], [])
