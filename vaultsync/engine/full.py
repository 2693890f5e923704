"""The full pass: scan both trees -> line up with the base -> decide -> plan -> guard -> commit the person's
edits -> apply -> commit the agent's side -> record the new base and, when the pass settled, the snapshot that
lets the next pass with nothing to do stop early (``snapshot.py``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from vaultsync.config import Config
from vaultsync.core.changes import changed
from vaultsync.core.decide import Outcome
from vaultsync.core.guard import empty_side, is_deleted
from vaultsync.core.merge import decide_all
from vaultsync.core.moves import apply_moves, detect_moves, moved_walk, plan_moves
from vaultsync.core.plan import Plan
from vaultsync.core.planner import make_plan
from vaultsync.core.scope import Names
from vaultsync.core.units import World, gather
from vaultsync.engine.apply import ApplyOutcome, kept_upserts
from vaultsync.engine.finish import (
    BaseSave,
    Closing,
    Decided,
    Recording,
    Rows,
    Step,
    finish,
    notes_once,
    open_repo,
    resaved,
    unchanged_blobs,
)
from vaultsync.engine.prepare import (
    PassContext,
    held_notes,
    hold_moved,
    hold_shrinks,
    missing_places,
    settle_conflicts,
)
from vaultsync.engine.quick import SnapshotKept, SnapshotUpdate
from vaultsync.engine.scoped import Narrowed, standing_unread
from vaultsync.git.index import blob_id
from vaultsync.git.repo import VaultRepo
from vaultsync.keys import is_file, scope_of
from vaultsync.memory.sizes import scanned_size_problems
from vaultsync.memory.tree import MemoryScan, list_memory, scan_memory, scan_memory_scope
from vaultsync.model import Held, Report, SideChange
from vaultsync.state.base import BaseEntry
from vaultsync.state.stat_walk import MemoryWalk
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import VaultScan, scan_vault, scan_vault_scope


def first_import(setting: PassContext, report: Report) -> Report | None:
    """A first import into an empty vault, run batch by batch (``first_import.py``); None when this is none."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    if options.dry_run or options.import_batch <= 0 or not store.empty() or setting.files.uncommitted_notes():
        return None
    vault = scan_vault(cfg.vault, layout)
    if vault.entities or vault.files or vault.conflict_copies or vault.foreign or vault.problems or vault.leftovers:
        return None
    repo = open_repo(cfg, report)
    if repo is None:
        return report
    from vaultsync.engine.first_import import run_import

    listing = list_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
    return run_import(setting, report, repo, listing)


def run_whole(setting: PassContext, report: Report, narrowed: Narrowed | None) -> Report | None:
    """The pass; None when a scoped one finds, before writing anything, that it must run in full."""
    found = _read(setting, report, narrowed)
    gone: set[str] = set() if narrowed is None else _gone_from_a_side(narrowed, found)
    if narrowed is not None and gone and len(gone) == len(narrowed.context.names):
        return None  # every entity gone from a side: an unmounted folder? the full pass's checks say
    if not setting.options.confirm_deletes:
        report.stopped = _deletion_stop(setting, narrowed, found, gone, report.held)
    if report.stopped:
        report.stopped += "; nothing was written (run again with --yes to confirm)"
        return report
    planned = _plan(setting, report, narrowed, found)
    if planned is None:
        return None
    if setting.options.dry_run:
        return report
    return _write(setting, report, narrowed, found, planned)


@dataclass
class _Found:
    """What the pass read and decided: the base, both sides' scans, the folder moves found (and the keys they
    renamed, new -> old), the notes listed as uncommitted before it wrote any, and every unit decided."""

    base: dict[str, BaseEntry]
    mem: MemoryScan
    vault: VaultScan
    moves: list[tuple[str, str]]
    renamed: dict[str, str]
    earlier: set[str]
    world: World


def _read(setting: PassContext, report: Report, narrowed: Narrowed | None) -> _Found:
    """Both sides scanned (a scoped pass: only its scope) and lined up with the base, each unit decided; what
    could not be read goes in the report, by file."""
    cfg, layout, store = setting.cfg, setting.layout, setting.store
    if narrowed is not None:
        scope = narrowed.scope
        base = store.load(narrowed.context.keys)
        mem = scan_memory_scope(cfg.workspace, cfg.life, scope.rels, scope.files)
        vault = scan_vault_scope(cfg.vault, layout, scope.rels, scope.files)
    else:
        base = store.load()
        mem = scan_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs())
        vault = scan_vault(cfg.vault, layout)
    mem.problems += scanned_size_problems(mem.files, cfg.janitor)
    scanned = mem.problems + vault.problems
    if narrowed is not None:
        scanned += standing_unread(cfg, layout, narrowed)
    report.problems += sorted(scanned, key=lambda p: p.path)  # by file, whichever files this pass read
    moves = detect_moves(mem, vault, base)
    renamed = apply_moves(moves, mem, base, cfg.life)
    earlier = setting.files.uncommitted_notes()
    ids = store.ids(narrowed.scope.rels if narrowed else None)
    world = gather(mem, vault, base, layout, ids, setting.today, earlier)
    hold_moved(cfg, layout, world)
    report.problems += world.problems
    decide_all(world)
    report.held = hold_shrinks(setting, world, narrowed.unread if narrowed is not None else 0)
    return _Found(base, mem, vault, moves, renamed, earlier, world)


def _gone_from_a_side(narrowed: Narrowed, found: _Found) -> set[str]:
    """The entities in a scoped pass's scope, known by name, that are gone from a side."""
    known = narrowed.context.names
    return {
        r for r in narrowed.scope.rels if r in known and (r not in found.mem.entities or r not in found.vault.entities)
    }


def _deletion_stop(
    setting: PassContext, narrowed: Narrowed | None, found: _Found, gone: set[str], held: list[Held]
) -> str:
    """Why the pass must stop before writing (a side's top folders missing, or a side empty); empty when it may
    go on. Deleting too much is not a stop: the shrink guard holds it (``hold_shrinks``)."""
    cfg, layout, world = setting.cfg, setting.layout, found.world
    if narrowed is not None:
        # A missing top folder shows as its entities or files gone; only then are the folders checked (it
        # takes every key of the base).
        emptied = gone or any(is_file(k) and is_deleted(u) for k, u in world.units.items())
        emptied = emptied or any(is_file(k) for h in held for k in h.keys)  # a held deletion is one too
        return narrowed.base.missing_places(cfg, layout) if emptied else ""
    mem, vault = found.mem, found.vault
    empty = {"memory": not mem.entities and not mem.files, "vault": not vault.entities and not vault.files}
    return empty_side(empty, bool(found.base)) or missing_places(cfg, layout, found.base)


@dataclass
class _Planned:
    """The pass's plan and what its end needs of the planning: the time stamp, the changes found, the person's
    edited paths, the notes said for the first time, and the conflict copies known, gone from where they were
    known, carried along by a folder move (new path -> key, detail, old path) and resolved."""

    stamp: str
    plan: Plan
    keyed: list[tuple[str, SideChange]]  # each change with its unit's key
    person_paths: set[str]
    fresh_notes: list[str]
    known: dict[str, tuple[str, str]]
    gone: list[str]
    carried: dict[str, tuple[str, str, str]]
    resolved: list[str]


def _plan(setting: PassContext, report: Report, narrowed: Narrowed | None, found: _Found) -> _Planned | None:
    """The plan, with what it finds in the report, and the conflict copies settled against the vault as the pass
    found it; None when a scoped pass finds it must run in full."""
    cfg, options, layout, store = setting.cfg, setting.options, setting.layout, setting.store
    world, vault, moves, renamed = found.world, found.vault, found.moves, found.renamed
    stamp = options.now().strftime("%Y%m%d-%H%M%S")
    context = narrowed.context if narrowed else None
    plan = make_plan(cfg, layout, world, found.mem, vault, found.base, stamp, context)
    if plan.widen:
        return None
    keyed, person_paths = changed(world, layout, vault, found.base, moves, renamed)
    person_paths -= held_notes(layout, report.held)  # a held deletion stays out of git until it is accepted
    changes = [change for _, change in keyed]
    plan_moves(plan, moves, renamed, found.base, cfg.life)
    report.changes += changes
    report.problems += plan.problems
    report.conflicts = plan.conflicts
    report.actions = [a.describe() for a in plan.actions]
    fresh_notes = notes_once(report, store, world.foreign)
    known = store.conflicts() | {c.copy_path: (c.key, c.detail) for c in options.conflicts}
    # Copies the scan does not read as notes (the remote round's copy of any other file) are open while they exist.
    report.open_conflicts = sorted(set(vault.conflict_copies) | {p for p in known if (cfg.vault / p).exists()})
    if narrowed is not None:  # the copies it did not read are as the last settled pass left them
        unread = [p for p in narrowed.seen.conflicts if (cfg.vault / p).exists()]
        report.open_conflicts = sorted(set(report.open_conflicts) | set(unread))
    gone, carried, resolved = settle_conflicts(cfg, layout, known, moves)
    person_paths |= {p for path in carried for p in (path, carried[path][2])}
    return _Planned(stamp, plan, keyed, person_paths, fresh_notes, known, gone, carried, resolved)


def _write(setting: PassContext, report: Report, narrowed: Narrowed | None, found: _Found, planned: _Planned) -> Report:
    """The person's edits and the plan handed to ``finish``, which writes them in its safe order."""
    repo = open_repo(setting.cfg, report)
    if repo is None:
        return report
    end = _End(setting, report, narrowed, found, planned)
    person = end.person_edits(repo)
    leftovers = found.mem.leftovers + found.vault.leftovers
    steps = [Step(planned.plan, end.written, setting.options.progress)]
    try:
        finish(setting, repo, report, Decided(person, leftovers, planned.stamp, steps, end.closing))
        return report
    finally:
        end.wait()


class _End:
    """What ``finish`` asks of the pass: the person's edits before anything is written, what the end needs of the
    plan once written (``written``), and what the agent's commit, the base and the snapshot need (``closing``)."""

    def __init__(
        self, setting: PassContext, report: Report, narrowed: Narrowed | None, found: _Found, planned: _Planned
    ) -> None:
        self.setting, self.report, self.narrowed, self.found, self.planned = setting, report, narrowed, found, planned
        self.wrote: list[ApplyOutcome] = []
        self.leaving: list[VaultAtEnd] = []

    def person_edits(self, repo: VaultRepo) -> tuple[set[str], list[SideChange]]:
        """What the person's commit takes: their edits, the conflict copies resolved, and the notes saved again
        in another form (``resaved``)."""
        found, planned, report = self.found, self.planned, self.report
        person_changes = [c for _, c in planned.keyed if c.side == "vault"]
        settled_copies = [
            SideChange("vault", scope_of(planned.known[p][0]), "conflict resolved") for p in planned.resolved
        ]
        person_changes += settled_copies
        report.changes += settled_copies
        # In a scoped pass a note saved again is one the quick check saw change.
        unchanged = unchanged_blobs(found.world, self.narrowed.seen.vault if self.narrowed is not None else None)
        resaved_paths, resaved_changes = resaved(repo, unchanged, found.earlier)
        return planned.person_paths | set(planned.resolved) | resaved_paths, person_changes + resaved_changes

    def written(self, applied: ApplyOutcome | None) -> Rows:
        """What the end needs of the plan ``finish`` applied; its units' rows for the base, but for failed writes."""
        assert applied is not None
        cfg, layout, report, found, plan = (
            self.setting.cfg,
            self.setting.layout,
            self.report,
            self.found,
            self.planned.plan,
        )
        self.wrote.append(applied)
        report.problems += applied.problems
        report.files_written = sum(1 for a in applied.done if a.op == "write")
        self.leaving.append(_leaving(cfg, layout, found.vault, found.world.foreign, applied, self.narrowed, plan.names))
        failed = applied.failed_keys | {old for new, old in found.renamed.items() if new in applied.failed_keys}
        upserts = kept_upserts(plan, applied, failed)
        return upserts, [k for k in plan.deletes if k not in failed], found.world.ids(), ()

    def closing(self) -> Closing:
        """What the agent's commit, the base and the snapshot need once the plan is written."""
        setting, found, planned, report = self.setting, self.found, self.planned, self.report
        applied, layout, world, plan = self.wrote[0], setting.layout, found.world, planned.plan
        # Units both sides already agree on but the base does not know (a pass killed after writing, before
        # committing) are committed now, so nothing stays uncommitted.
        converged = {
            u.vault_note.path if u.vault_note else layout.note_for_key(k)
            for k, u in world.units.items()
            if u.decision and u.decision.outcome is Outcome.CONVERGED
        }
        vault_paths = {a.shown for a in applied.done if a.side == "vault"} | converged | found.earlier
        agent_changes = [(k, c) for k, c in planned.keyed if c.side == "memory"]
        touched = sorted({scope_of(k) for a in applied.done if a.side == "vault" for k in a.keys})
        base = BaseSave(
            conflicts={c.copy_path: (c.key, c.detail) for c in (*setting.options.conflicts, *plan.conflicts)}
            | {p: c[:2] for p, c in planned.carried.items()},
            resolved=planned.gone,
            reported=planned.fresh_notes,
        )
        opened = sorted(set(report.open_conflicts) | {c.copy_path for c in plan.conflicts})
        walked = moved_walk(setting.walk, found.moves)
        recording = None if applied.failed_keys else _recording(walked, found.mem, applied, plan.names, self.leaving[0])
        return Closing((vault_paths, agent_changes, touched), base, opened, recording)

    def wait(self) -> None:
        """Let the snapshot index a scoped pass was bringing up to date finish, whatever ended the pass."""
        for left in self.leaving:
            left.wait()


@dataclass
class VaultAtEnd:
    """The vault as a pass leaves it, for the snapshot a settled pass records: each note's bytes, the notes in
    synced places it leaves alone, and, for a scoped pass, what it keeps of the snapshot it started from and the
    snapshot index being brought up to it while the pass commits."""

    notes: dict[str, bytes]
    left_alone: list[str]
    patch: SnapshotUpdate | None = None
    _blobs: dict[str, str] | None = field(default=None, init=False, repr=False)

    def blobs(self) -> dict[str, str]:
        if self._blobs is None:
            self._blobs = {path: blob_id(data) for path, data in self.notes.items()}
        return self._blobs

    def wait(self) -> None:
        if self.patch is not None:
            self.patch.suspects()


def _leaving(
    cfg: Config,
    layout: VaultLayout,
    vault: VaultScan,
    foreign: Iterable[str],
    applied: ApplyOutcome,
    narrowed: Narrowed | None,
    names: dict[str, Names],
) -> VaultAtEnd:
    notes = {n.path: n.raw for n in vault.files.values()}
    for entity in vault.entities.values():
        notes |= {n.path: n.raw for n in entity.facts.values()}
        if entity.note:
            notes[entity.note.path] = entity.note.raw
    for action in applied.done:
        if action.side == "vault" and action.op == "write":
            notes[action.shown] = action.data
        elif action.side == "vault":
            notes.pop(action.shown, None)
    leaving = VaultAtEnd(notes, [*vault.conflict_copies, *vault.foreign, *foreign])
    if narrowed is not None and not applied.failed_keys:
        renamed = names != narrowed.context.names
        carry = SnapshotKept(narrowed.seen, narrowed.scope.reads(layout), narrowed.context.inside, renamed)
        # changed copies elsewhere (a resolved one is gone): as they are now
        leaving.left_alone += [p for p in carry.seen.vault if not carry.read(p) and (cfg.vault / p).exists()]
        leaving.patch = SnapshotUpdate.start(cfg, carry, leaving.blobs(), leaving.left_alone)
    return leaving


def _recording(
    walk: MemoryWalk, mem: MemoryScan, applied: ApplyOutcome, names: dict[str, Names], leaving: VaultAtEnd
) -> Recording:
    read = {f.mem_path: f.raw for f in mem.files.values()}
    for entity in mem.entities.values():
        if entity.items_raw is not None:
            read[f"life/{entity.rel}/items.json"] = entity.items_raw
        if entity.summary is not None:
            read[f"life/{entity.rel}/summary.md"] = entity.summary.raw
    written = {a.shown: a.data if a.op == "write" else None for a in applied.done if a.side == "memory"}
    entities: dict[str, list[object]] = {rel: [name, list(aliases)] for rel, (name, aliases) in names.items()}
    return Recording(walk, written, read, leaving.blobs, leaving.left_alone, entities, leaving.patch)
