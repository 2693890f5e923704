"""The full pass over a large memory, a batch of entities at a time, so that memory use follows the batch and
not the size of the memory (holding every unit at once took 2.1 GB at 200k facts).

A full pass runs when no settled pass left a snapshot to start from (after an upgrade, a config change, a
stopped pass) or when too much changed for a scoped one. Each entity's units are decided from its own base,
memory and vault; what rendering it needs of the others is their names and aliases (for mentions) and how many
notes share each name (for short links), as in a first import (``first_import.py``).

Both trees are listed first, without being read. The first walk reads, lines up and decides each batch, and
keeps only what the pass must know before it writes anything: every entity's names, every note's name, what
each side would delete (for the safety checks) and what the person changed (committed first, as by any pass),
with a fingerprint of each batch. The second walk reads each batch again, plans, writes and saves it. A batch
that reads differently the second time (a file changed meanwhile) ends the pass there: what was written is
committed, no snapshot is recorded, and the next pass, a full one, goes on from there.

Most full passes change no name (the first after an upgrade or a config change). The first walk therefore also
plans each batch against the names the last settled pass left; when the pass ends with those same names, a
batch whose plan writes nothing is not read a second time.

A folder the person moved in the vault shows as an entity gone from its old place and a new one at the new
place: every entity that is one or the other is read in the first batch, where the two are paired.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial

from vaultsync.config import Config
from vaultsync.core.changes import changed
from vaultsync.core.decide import Outcome
from vaultsync.core.guard import Tally, empty_side
from vaultsync.core.merge import decide_all
from vaultsync.core.moves import apply_moves, base_notes, moved_walk, pair_moves, plan_moves
from vaultsync.core.plan import Action, Plan
from vaultsync.core.planner import Planner, make_plan
from vaultsync.core.scope import Names, Planned
from vaultsync.core.units import World, gather
from vaultsync.engine.apply import Applied
from vaultsync.engine.finish import (
    BaseSave,
    Closing,
    Decided,
    Recording,
    Rows,
    Step,
    finish,
    keep_ids,
    notes_once,
    open_repo,
    resaved,
    touched_notes,
    unchanged_blobs,
)
from vaultsync.engine.first_import import FILES_PER_ENTITY, racy_reads
from vaultsync.engine.prepare import PassContext, hold_moved, missing_places, settle_conflicts
from vaultsync.git.index import blob_id
from vaultsync.keys import is_fact, is_file, mem_path_of, note_of, rel_of, scope_of
from vaultsync.memory.sizes import scanned_size_problems
from vaultsync.memory.tree import MemoryListing, MemoryScan, list_memory, scan_memory_scope
from vaultsync.model import Change, Problem, Report, Severity
from vaultsync.names import fold
from vaultsync.state import snapshot
from vaultsync.state.base import BaseEntry
from vaultsync.state.files import StateFiles
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.links import note_stem
from vaultsync.vault.scan import VaultListing, VaultScan, list_fact_notes, list_vault, scan_vault_scope


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
    person_changes: list[tuple[str, Change]] = field(default_factory=list)  # with their keys (``keyed_changes``)
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


def run_batched(setting: PassContext, report: Report) -> Report | None:
    """The full pass, batch by batch; None when the memory fits in one batch (the pass then reads it whole)."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    size = options.full_batch
    if size <= 0:
        return None
    listing = list_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
    listed = list_vault(cfg.vault, layout)
    keys = store.keys()
    batches = list(_batches(listing, listed, keys, size, partial(list_fact_notes, cfg.vault, layout)))
    if sum(len(b.rels) for b in batches) <= size:  # one batch: the pass reads it whole
        return None
    earlier = setting.files.uncommitted_notes()
    report.problems += sorted(listing.problems + listed.problems, key=lambda p: p.path)
    stamp = options.now().strftime("%Y%m%d-%H%M%S")
    guess = _guess(cfg, layout, keys)

    def read(batch: Batch) -> Read:
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

    known = FirstWalk()
    touched = set() if options.dry_run else touched_notes(cfg)
    for batch in batches:
        scanned = read(batch)
        report.problems += (
            sorted(scanned.mem.problems + scanned.vault.problems, key=lambda p: p.path) + scanned.world.problems
        )
        planner = Planner(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base)
        planner.target()
        _, own, notes = planner.names_and_notes()
        known.names |= own
        known.counts.update(map(note_stem, notes))
        changes, paths = changed(scanned.world, layout, scanned.vault, scanned.base, scanned.moves, scanned.renamed)
        known.person_changes += [(k, c) for k, c in changes if c.side == "vault"]
        known.person_paths |= paths
        known.unchanged |= unchanged_blobs(scanned.world, touched)
        known.moves += scanned.moves
        known.marks.append(scanned.mark(own, notes, known.tally.add(scanned.world, options.deleting), paths))
        if guess is not None and not scanned.moves:
            plan = make_plan(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base, stamp, guess)
            if not (plan.actions or plan.upserts or plan.deletes):
                reads = racy_reads(scanned.mem, setting.walk.racy)
                left = Settled(_blobs(scanned, []), reads, scanned.world.foreign, plan.problems)
                known.settled[len(known.marks) - 1] = left
                if not options.dry_run:
                    keep_ids(store, scanned.world.ids())
    if guess is None or (known.names, known.counts) != (guess.names, guess.counts):
        known.settled.clear()  # planned against other names than the pass ends with: all are read again

    if not options.confirm_deletes:
        empty = {"memory": not listing.rels and not listing.files, "vault": not listed.rels and not listed.files}
        missing = empty_side(empty, bool(keys)) or missing_places(cfg, layout, keys)
        report.stopped = missing or known.tally.guard(cfg)
    if report.stopped:
        report.stopped += "; nothing was written (run again with --yes to confirm)"
        return report
    del keys  # each batch holds its own
    return _write(setting, report, batches, known, listing, listed, read, stamp)


def _guess(cfg: Config, layout: VaultLayout, keys: list[str]) -> Planned | None:
    """Every entity's names and every note's name as the last settled pass left them (its snapshot's names and
    the base's units), to plan each batch against in the first walk; None when there are none to go by.

    Most full passes change no name (an upgrade, a config change): then every batch planned against them with
    nothing to write needs no second read.
    """
    saved = snapshot.saved_entities(StateFiles(cfg.state_dir))
    if saved is None:
        return None
    found = saved[1]
    names: dict[str, Names] = {}
    for rel, value in found.items():
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], list)):
            return None
        names[rel] = (str(value[0]), tuple(str(a) for a in value[1]))
    counts = Counter(fold(slug_of(rel)) for rel in names)
    for key in keys:
        if is_fact(key):
            counts[fold(note_of(key))] += 1
        elif is_file(key):
            path = layout.file_note(mem_path_of(key))
            if path:
                counts[note_stem(path)] += 1
    return Planned(names, counts)


def _blobs(scanned: Read, done: list[Action]) -> dict[str, str]:
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


def _batches(
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


def _write(
    setting: PassContext,
    report: Report,
    batches: list[Batch],
    known: FirstWalk,
    listing: MemoryListing,
    listed: VaultListing,
    read: Callable[[Batch], Read],
    stamp: str,
) -> Report:
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    conflicts = store.conflicts() | {c.copy_path: (c.key, c.detail) for c in options.conflicts}
    gone, carried, resolved = settle_conflicts(cfg, layout, conflicts, known.moves)
    person_paths = known.person_paths | set(resolved) | {p for new in carried for p in (new, carried[new][2])}
    person_changes = [c for _, c in sorted(known.person_changes, key=lambda kc: kc[0])]
    settled_copies = [Change("vault", scope_of(conflicts[p][0]), "conflict resolved") for p in resolved]
    person_changes += settled_copies
    context = Planned(known.names, known.counts)
    earlier = setting.files.uncommitted_notes()
    vault_paths = set(earlier)
    written: dict[str, bytes | None] = {}
    reads: dict[str, bytes] = {}
    blobs: dict[str, str] = {}
    touched: set[str] = set()
    changed_by: list[tuple[str, Change]] = []
    new_conflicts: dict[str, tuple[str, str]] = {}
    foreign: list[str] = list(listed.foreign)
    failed = complete = False
    total = sum(b.size for b in batches)
    done = 0

    def steps() -> Iterator[Step]:
        """Each batch read again, checked against the first walk, planned and handed on; in a dry run, only
        planned."""
        nonlocal complete, done, blobs, reads, foreign
        for number, batch in enumerate(batches):
            left = known.settled.pop(number, None)
            if left is not None:
                blobs |= left.blobs
                reads |= left.reads
                foreign += left.foreign
                report.problems += left.problems
                done += batch.size
                if options.progress and not options.dry_run:
                    options.progress(done, total)
                continue
            scanned = read(batch)
            planner = Planner(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base)
            planner.target()
            _, own, notes = planner.names_and_notes()
            changes, paths = changed(scanned.world, layout, scanned.vault, scanned.base, scanned.moves, scanned.renamed)
            if scanned.mark(own, notes, Tally().add(scanned.world), paths) != known.marks[number]:
                report.problems.append(
                    Problem(
                        str(cfg.vault),
                        f"files changed while this pass ran; {total - done} entities and files are left for the "
                        "next pass",
                        Severity.WARNING,
                    )
                )
                return
            plan = make_plan(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base, stamp, context)
            plan_moves(plan, scanned.moves, scanned.renamed, scanned.base, cfg.life)
            changed_by.extend(changes)
            report.problems += plan.problems
            report.conflicts += plan.conflicts
            report.actions += [a.describe() for a in plan.actions]
            foreign += scanned.world.foreign
            done += batch.size
            if not options.dry_run:
                yield Step(plan, partial(kept, scanned, plan))
        complete = True

    def kept(scanned: Read, plan: Plan, applied: Applied | None) -> Rows:
        nonlocal failed, blobs, reads
        assert applied is not None
        if options.progress:
            options.progress(done, total)
        report.problems += applied.problems
        report.files_written += sum(1 for a in applied.done if a.op == "write")
        failed = failed or bool(applied.failed_keys)
        for action in applied.done:
            if action.side == "memory":
                written[action.shown] = action.data if action.op == "write" else None
            else:
                vault_paths.add(action.shown)
                touched.update(scope_of(k) for k in action.keys)
        blobs |= _blobs(scanned, applied.done)
        reads |= racy_reads(scanned.mem, setting.walk.racy)
        vault_paths.update(
            u.vault_note.path if u.vault_note else layout.note_for_key(k)
            for k, u in scanned.world.units.items()
            if u.decision and u.decision.outcome is Outcome.CONVERGED
        )
        new_conflicts.update((c.copy_path, (c.key, c.detail)) for c in plan.conflicts)
        failures = applied.failed_keys | {old for new, old in scanned.renamed.items() if new in applied.failed_keys}
        known.names |= plan.own
        upserts = {k: v for k, v in plan.upserts.items() if k not in failures}
        return upserts, [k for k in plan.deletes if k not in failures], scanned.world.ids(), ()

    def closing() -> Closing:
        report.changes += [c for _, c in sorted(changed_by, key=lambda kc: kc[0])] + settled_copies
        fresh_notes = notes_once(report, store, foreign)
        still = {p for p in conflicts if (cfg.vault / p).exists()}
        report.open_conflicts = sorted(set(listed.conflict_copies) | set(new_conflicts) | still)
        agent_changes = [c for c in report.changes if c.side == "memory"]
        copies = (
            new_conflicts
            | {c.copy_path: (c.key, c.detail) for c in options.conflicts}
            | {new: (key, detail) for new, (key, detail, _) in carried.items()}
        )
        base = BaseSave(conflicts=copies, resolved=gone, reported=fresh_notes)
        opened = sorted(set(report.open_conflicts) | set(carried))
        recording = None
        if complete and not failed:
            entities: dict[str, list[object]] = {r: [n, list(a)] for r, (n, a) in sorted(known.names.items())}
            left_alone = [*listed.conflict_copies, *foreign]
            walk = moved_walk(setting.walk, known.moves)
            recording = Recording(walk, written, reads, lambda: blobs, left_alone, entities)
        return Closing((vault_paths, agent_changes, sorted(touched)), base, opened, recording)

    if options.dry_run:
        for _ in steps():
            pass
        closing()
        return report
    repo = open_repo(cfg, report)
    if repo is None:
        return report
    resaved_paths, resaved_changes = resaved(repo, known.unchanged, earlier)
    person = person_paths | resaved_paths, person_changes + resaved_changes
    # the base is not saved when git refused: the notes listed as uncommitted wait for the next pass
    finish(setting, repo, report, Decided(person, listing.leftovers + listed.leftovers, stamp, steps(), closing))
    return report
