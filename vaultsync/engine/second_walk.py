"""The second walk of a full pass in batches (``batched.py``), and the end it hands to ``finish``: the conflict
copies settled, the person's edits committed, then each batch read again, checked against what the first walk
kept of it (``FirstWalk``), planned and handed to ``finish`` one at a time, so that memory follows the batch.
What the agent's commit, the base and the snapshot need is gathered as each batch is written, in ``closing``.

Its own module because it is the half of that pass that writes: the first walk only reads and decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from vaultsync.core.changes import changed
from vaultsync.core.decide import Outcome
from vaultsync.core.guard import Tally
from vaultsync.core.moves import moved_walk, plan_moves
from vaultsync.core.plan import Plan
from vaultsync.core.planner import Planner, make_plan
from vaultsync.core.scope import Planned
from vaultsync.engine.apply import ApplyOutcome, kept_upserts
from vaultsync.engine.batches import Batch, FirstWalk, Read, note_blobs
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
)
from vaultsync.engine.first_import import racy_reads
from vaultsync.engine.prepare import PassContext, settle_conflicts
from vaultsync.git.repo import VaultRepo
from vaultsync.keys import scope_of
from vaultsync.memory.tree import MemoryListing
from vaultsync.model import Problem, Report, Severity, SideChange
from vaultsync.vault.scan import VaultListing


def write_batches(
    setting: PassContext,
    report: Report,
    batches: list[Batch],
    known: FirstWalk,
    listing: MemoryListing,
    listed: VaultListing,
    read: Callable[[Batch], Read],
    stamp: str,
) -> Report:
    """The second walk and the end of the pass: the conflict copies settled, then, after the person's edits
    are committed, each batch read again and handed to ``finish`` one at a time; a dry run only plans them."""
    copies = _settle_copies(setting, known.moves)
    walk = _SecondWalk(setting, report, known, copies, setting.files.uncommitted_notes(), listed, stamp)
    if setting.options.dry_run:
        walk.plan_only(batches, read)
        return report
    repo = open_repo(setting.cfg, report)
    if repo is None:
        return report
    person = walk.person_edits(repo)
    # the base is not saved when git refused: the notes listed as uncommitted wait for the next pass
    leftovers = listing.leftovers + listed.leftovers
    finish(setting, repo, report, Decided(person, leftovers, stamp, walk.steps(batches, read), walk.closing))
    return report


@dataclass
class _Copies:
    """The conflict copies as the second walk starts: those known (the base's and the options'), those gone
    from where they were known, those a folder move carried along (new path -> key, detail, old path), those
    the person resolved by deleting them, and a change for each one resolved."""

    known: dict[str, tuple[str, str]]
    gone: list[str]
    carried: dict[str, tuple[str, str, str]]
    resolved: list[str]
    settled: list[SideChange]


def _settle_copies(setting: PassContext, moves: list[tuple[str, str]]) -> _Copies:
    """Read before any batch is written: the copies are settled against the vault as the pass found it."""
    known = setting.store.conflicts() | {c.copy_path: (c.key, c.detail) for c in setting.options.conflicts}
    gone, carried, resolved = settle_conflicts(setting.cfg, setting.layout, known, moves)
    settled = [SideChange("vault", scope_of(known[p][0]), "conflict resolved") for p in resolved]
    return _Copies(known, gone, carried, resolved, settled)


class _SecondWalk:
    """Each batch read again, checked against the first walk, planned and handed to ``finish``; and, gathered
    as each is written, what the agent's commit, the base and the snapshot need at the end (``closing``)."""

    def __init__(
        self,
        setting: PassContext,
        report: Report,
        known: FirstWalk,
        copies: _Copies,
        earlier: set[str],
        listed: VaultListing,
        stamp: str,
    ) -> None:
        self.setting, self.report, self.known, self.copies, self.stamp = setting, report, known, copies, stamp
        self.earlier = earlier  # the notes listed as uncommitted before this pass wrote any
        self.listed = listed
        self.context = Planned(known.names, known.counts)  # known.names itself: each batch's own names join it
        self.vault_paths = set(earlier)
        self.written: dict[str, bytes | None] = {}
        self.reads: dict[str, bytes] = {}
        self.blobs: dict[str, str] = {}
        self.touched: set[str] = set()
        self.changed_by: list[tuple[str, SideChange]] = []
        self.new_conflicts: dict[str, tuple[str, str]] = {}
        self.foreign: list[str] = list(listed.foreign)
        self.failed = self.complete = False
        self.total = self.done = 0

    def person_edits(self, repo: VaultRepo) -> tuple[set[str], list[SideChange]]:
        """What the person's commit takes: the edits the first walk found, the conflict copies resolved or
        carried along, and the notes saved again in another form (``resaved``)."""
        known, copies = self.known, self.copies
        paths = (
            known.person_paths | set(copies.resolved) | {p for new, c in copies.carried.items() for p in (new, c[2])}
        )
        changes = [c for _, c in sorted(known.person_changes, key=lambda kc: kc[0])] + copies.settled
        resaved_paths, resaved_changes = resaved(repo, known.unchanged, self.earlier)
        return paths | resaved_paths, changes + resaved_changes

    def plan_only(self, batches: list[Batch], read: Callable[[Batch], Read]) -> None:
        """A dry run: every batch planned into the report, nothing written."""
        for _ in self.steps(batches, read):
            pass
        self.closing()

    def steps(self, batches: list[Batch], read: Callable[[Batch], Read]) -> Iterator[Step]:
        """Each batch read again, checked against the first walk, planned and handed on; in a dry run, only
        planned. A batch that reads differently ends the walk there: the pass is not complete."""
        self.total = sum(b.size for b in batches)
        for number, batch in enumerate(batches):
            if self._take_settled(number, batch):
                continue
            scanned = read(batch)
            plan = self._plan(number, scanned)
            if plan is None:
                return
            self.done += batch.size
            if not self.setting.options.dry_run:
                yield Step(plan, partial(self._kept, scanned, plan))
        self.complete = True

    def _take_settled(self, number: int, batch: Batch) -> bool:
        """Take what the first walk kept of a batch it found nothing to write in, instead of reading it again;
        False when it kept nothing of this one."""
        left = self.known.settled.pop(number, None)
        if left is None:
            return False
        self.blobs |= left.blobs
        self.reads |= left.reads
        self.foreign += left.foreign
        self.report.problems += left.problems
        self.done += batch.size
        options = self.setting.options
        if options.progress and not options.dry_run:
            options.progress(self.done, self.total)
        return True

    def _plan(self, number: int, scanned: Read) -> Plan | None:
        """The batch's plan, with what it finds in the report; None (and a warning) when the batch read
        otherwise than in the first walk."""
        cfg, layout, report = self.setting.cfg, self.setting.layout, self.report
        planner = Planner(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base)
        planner.target()
        _, own, notes = planner.names_and_notes()
        changes, paths = changed(scanned.world, layout, scanned.vault, scanned.base, scanned.moves, scanned.renamed)
        if scanned.mark(own, notes, Tally().add(scanned.world), paths) != self.known.marks[number]:
            report.problems.append(
                Problem(
                    str(cfg.vault),
                    f"files changed while this pass ran; {self.total - self.done} entities and files are left for "
                    "the next pass",
                    Severity.WARNING,
                )
            )
            return None
        plan = make_plan(cfg, layout, scanned.world, scanned.mem, scanned.vault, scanned.base, self.stamp, self.context)
        plan_moves(plan, scanned.moves, scanned.renamed, scanned.base, cfg.life)
        self.changed_by.extend(changes)
        report.problems += plan.problems
        report.conflicts += plan.conflicts
        report.actions += [a.describe() for a in plan.actions]
        self.foreign += scanned.world.foreign
        return plan

    def _kept(self, scanned: Read, plan: Plan, applied: ApplyOutcome | None) -> Rows:
        """What the end needs of a batch ``finish`` applied; its units' rows for the base, but for failed writes."""
        assert applied is not None
        options, report, known = self.setting.options, self.report, self.known
        if options.progress:
            options.progress(self.done, self.total)
        report.problems += applied.problems
        report.files_written += sum(1 for a in applied.done if a.op == "write")
        self.failed = self.failed or bool(applied.failed_keys)
        for action in applied.done:
            if action.side == "memory":
                self.written[action.shown] = action.data if action.op == "write" else None
            else:
                self.vault_paths.add(action.shown)
                self.touched.update(scope_of(k) for k in action.keys)
        self.blobs |= note_blobs(scanned, applied.done)
        self.reads |= racy_reads(scanned.mem, self.setting.walk.racy)
        self.vault_paths.update(
            u.vault_note.path if u.vault_note else self.setting.layout.note_for_key(k)
            for k, u in scanned.world.units.items()
            if u.decision and u.decision.outcome is Outcome.CONVERGED
        )
        self.new_conflicts.update((c.copy_path, (c.key, c.detail)) for c in plan.conflicts)
        failures = applied.failed_keys | {old for new, old in scanned.renamed.items() if new in applied.failed_keys}
        known.names |= plan.own
        upserts = kept_upserts(plan, applied, failures)
        return upserts, [k for k in plan.deletes if k not in failures], scanned.world.ids(), ()

    def closing(self) -> Closing:
        """What the agent's commit, the base and the snapshot need once every batch is written."""
        cfg, options, report, copies = self.setting.cfg, self.setting.options, self.report, self.copies
        listed = self.listed
        keyed = sorted(self.changed_by, key=lambda kc: kc[0])
        report.changes += [c for _, c in keyed] + copies.settled
        fresh_notes = notes_once(report, self.setting.store, self.foreign)
        still = {p for p in copies.known if (cfg.vault / p).exists()}
        report.open_conflicts = sorted(set(listed.conflict_copies) | set(self.new_conflicts) | still)
        agent_changes = [(k, c) for k, c in keyed if c.side == "memory"]
        kept_copies = (
            self.new_conflicts
            | {c.copy_path: (c.key, c.detail) for c in options.conflicts}
            | {new: (key, detail) for new, (key, detail, _) in copies.carried.items()}
        )
        base = BaseSave(conflicts=kept_copies, resolved=copies.gone, reported=fresh_notes)
        opened = sorted(set(report.open_conflicts) | set(copies.carried))
        recording = None
        if self.complete and not self.failed:
            entities: dict[str, list[object]] = {r: [n, list(a)] for r, (n, a) in sorted(self.known.names.items())}
            left_alone = [*listed.conflict_copies, *self.foreign]
            walk = moved_walk(self.setting.walk, self.known.moves)
            recording = Recording(walk, self.written, self.reads, lambda: self.blobs, left_alone, entities)
        return Closing((self.vault_paths, agent_changes, sorted(self.touched)), base, opened, recording)
