"""The first import into an empty vault, a batch of entities at a time, so that memory use follows the batch
and not the size of the memory tree.

With no base and nothing in the vault, every unit is the memory's own and each entity can be planned alone,
given every entity's name and aliases (for mentions) and how many notes share each note name (for short
links). A first walk over the batches computes just those; a second renders, writes and lets go of each batch.
With several batches and cores, both walks run in forked workers (``vaultsync.system.forked``), the results taken in
batch order, so the report, the base and the commit come out as from one process. The base rows of every batch
go into one open transaction, committed after the one agent commit that takes every note, as in any pass: a
killed import leaves an empty base and a next pass that commits what was written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date
from functools import partial

from vaultsync.config import Config
from vaultsync.core.changes import side_changes
from vaultsync.core.merge import decide_all
from vaultsync.core.plan import Plan
from vaultsync.core.planner import Planner, make_plan
from vaultsync.core.scope import Names, Planned
from vaultsync.core.units import World, gather
from vaultsync.engine.apply import ApplyOutcome
from vaultsync.engine.finish import BaseSave, Closing, Decided, Recording, Rows, Step, finish, notes_once, write
from vaultsync.engine.prepare import PassContext
from vaultsync.git.feed import fast_import_blobs
from vaultsync.git.index import blob_id
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import GitFailed
from vaultsync.git.secrets import scan_bytes
from vaultsync.keys import scope_of
from vaultsync.memory.sizes import scanned_size_problems
from vaultsync.memory.tree import MemoryListing, MemoryScan, scan_memory_scope
from vaultsync.model import Problem, Report, SideChange
from vaultsync.state.base import UnitRow, unit_rows
from vaultsync.state.files import StateFiles
from vaultsync.system.forked import ForkedMap, WorkerFailed, one_at_a_time, processes_for
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.links import note_stem
from vaultsync.vault.scan import VaultScan

FILES_PER_ENTITY = 10  # a batch holds this many memory files for each entity it would hold
# Written in this process (one core, or one batch), a memory of up to KEEP_ENTITIES entities is read once: the
# first walk keeps what it read, up to KEEP_UNITS units (facts, entities, files; about 3 KB each), for the
# second to use instead of reading and parsing it again. A larger memory is read twice, so that what the first
# walk held does not add to the peak its commit reaches (at 200k facts, close to the 300 MB the import is held
# to). Forked workers read their batches again themselves: what the parent held, each would copy in part.
KEEP_ENTITIES = 3_000
KEEP_UNITS = 60_000

Read = tuple[MemoryScan, World]
Job = tuple[int, list[str], list[str]]  # a batch's number, entities and memory files


def batches(listing: MemoryListing, size: int) -> Iterator[tuple[list[str], list[str]]]:
    """(entities, files) to read together: ``size`` entities, or ten times as many files, at a time."""
    size = max(1, size)
    for i in range(0, len(listing.rels), size):
        yield listing.rels[i : i + size], []
    step = size * FILES_PER_ENTITY
    for i in range(0, len(listing.files), step):
        yield [], listing.files[i : i + step]


def _read(cfg: Config, layout: VaultLayout, today: date, rels: list[str], files: list[str]) -> Read:
    mem = scan_memory_scope(cfg.workspace, cfg.life, rels, files)
    mem.problems += scanned_size_problems(mem.files, cfg.janitor)
    world = gather(mem, VaultScan(), {}, layout, {}, today)
    decide_all(world)
    return mem, world


def _names(
    cfg: Config, layout: VaultLayout, today: date, jobs: list[Job], processes: int
) -> tuple[dict[str, Names], Counter[str], list[str], dict[int, Read]]:
    """Every entity's name and aliases, how many notes share each note name, every note the import writes,
    and, in this process, the batches read that are kept for the second walk (by their number)."""
    names: dict[str, Names] = {}
    counts: Counter[str] = Counter()
    paths: list[str] = []
    kept: dict[int, Read] = {}
    keep = processes == 1 and sum(len(rels) for _, rels, _ in jobs) <= KEEP_ENTITIES
    units = 0
    name = _Namer(cfg, layout, today, keep)
    with ForkedMap(name, jobs, processes) if processes > 1 else nullcontext() as workers:
        for number, (own, notes, read) in enumerate(workers or map(name, jobs)):
            names |= own
            counts.update(map(note_stem, notes))
            paths += notes
            if read is not None:
                units += len(read[1].units)
                if units <= KEEP_UNITS:
                    kept[number] = read
    return names, counts, paths, kept


@dataclass
class _Namer:
    """Reads one batch for the names of its entities and the notes it will write; in this process, it hands
    back what it read, for the second walk."""

    cfg: Config
    layout: VaultLayout
    today: date
    keep: bool

    def __call__(self, job: Job) -> tuple[dict[str, Names], list[str], Read | None]:
        _, rels, files = job
        mem, world = _read(self.cfg, self.layout, self.today, rels, files)
        planner = Planner(self.cfg, self.layout, world, mem, VaultScan(), {})
        planner.target()
        _, own, notes = planner.names_and_notes()
        return own, notes, (mem, world) if self.keep else None


def run_import(setting: PassContext, report: Report, repo: VaultRepo, listing: MemoryListing) -> Report:
    """The first walk names every entity and note; then each batch is written (by forked workers, with several
    batches and cores) and handed to ``finish`` in batch order, which commits once and saves the base."""
    cfg, options, layout, today = setting.cfg, setting.options, setting.layout, setting.today
    size = options.import_batch
    jobs = [(number, rels, files) for number, (rels, files) in enumerate(batches(listing, size))]
    processes = processes_for(len(jobs), options.import_workers)
    names, counts, planned, kept = _names(cfg, layout, today, jobs, processes)
    stamp = options.now().strftime("%Y%m%d-%H%M%S")
    report.problems += listing.problems
    total = len(planned)
    fed = repo.feeds(total)
    writer = _Writer(cfg, layout, today, stamp, Planned(names, counts), kept, setting.walk.racy, fed, processes > 1)
    del names, counts, kept  # the writer holds what planning needs; the commit needs room of its own
    gathered = _Gathered(setting, report, repo, total)

    # An empty vault: no person's edits to commit. When git refuses the agent's commit, the base stays empty
    # and the notes listed as uncommitted: the next pass commits them.
    steps = gathered.steps(writer, jobs, processes)
    decided = Decided((set(), []), listing.leftovers, stamp, steps, gathered.closing, planned)
    del writer, planned, steps  # a path per note: not worth holding through the import
    try:
        finish(setting, repo, report, decided)
    except WorkerFailed as exc:  # the notes written stay, listed as uncommitted: the next pass takes them in
        report.problems.append(Problem(str(cfg.vault), f"{exc}; the next pass finishes the import"))
    return report


class _Gathered:
    """What the import keeps of each batch written, taken in batch order, for the end of the pass: the
    report's findings, the notes and memory files written, the entities' names; and the closing it makes of
    them for ``finish``."""

    def __init__(self, setting: PassContext, report: Report, repo: VaultRepo, total: int) -> None:
        self.setting, self.report, self.repo, self.total = setting, report, repo, total
        self.read: dict[str, bytes] = {}  # memory files too fresh for their stat: recorded by what was read
        self.written: dict[str, bytes | None] = {}
        self.blobs: dict[str, str] = {}
        self.touched: set[str] = set()
        self.own: dict[str, Names] = {}
        self.clean: set[str] = set()  # notes given to git's index as they were written, which held no secret
        self.failed = False

    def steps(self, writer: _Writer, jobs: list[Job], processes: int) -> Iterator[Step]:
        """Each batch as a worker wrote it, in batch order; the workers and the writer go when it ends."""
        # Forked before the feed starts its thread (see ``vaultsync.system.forked``); one batch, or one core, is
        # written here.
        workers = ForkedMap(writer, jobs, processes) if processes > 1 else None
        feed = self.repo.feed(self.total)
        done = 0
        with workers or nullcontext(), feed or nullcontext():
            for batch in workers or map(writer, jobs):
                if feed is not None:  # its notes go to git meanwhile, but for any holding a secret
                    feed.add(batch.clean, batch.blobs_fed)
                done += len(batch.actions)
                yield Step(None, partial(self._keep, batch, min(done, self.total)))

    def _keep(self, batch: BatchResult, done: int, _: ApplyOutcome | None) -> Rows:
        """Take in what a batch's writing did; its units' rows go to the base's open transaction."""
        report, progress = self.report, self.setting.options.progress
        report.problems += batch.problems
        report.changes += batch.changes
        report.actions += batch.actions
        report.files_written += batch.files_written
        self.failed = self.failed or batch.failed
        self.blobs.update(batch.blobs)
        self.touched.update(batch.touched)
        self.clean.update(batch.clean)
        self.written.update(batch.memory)
        self.read.update(batch.read)
        self.own.update(batch.own)
        if progress is not None:
            progress(done, self.total)
        return {}, (), batch.ids, batch.rows

    def closing(self) -> Closing:
        report = self.report
        base = BaseSave(reported=notes_once(report, self.setting.store, ()), compact=True)
        agent_changes = [("", c) for c in report.changes if c.side == "memory"]  # an empty vault: the agent's
        recording = None
        if not self.failed:
            entities: dict[str, list[object]] = {r: [n, list(a)] for r, (n, a) in self.own.items()}
            recording = Recording(self.setting.walk, self.written, self.read, lambda: self.blobs, [], entities)
        agent = set(self.blobs), agent_changes, sorted(self.touched)
        return Closing(agent, base, report.open_conflicts, recording, _checked(self.repo, self.clean, self.blobs))


@dataclass
class _Writer:
    """Reads, plans and writes one batch: in this process, or in a worker forked with all of this."""

    cfg: Config
    layout: VaultLayout
    today: date
    stamp: str
    context: Planned
    kept: dict[int, Read]
    racy: set[str]
    fed: bool  # the notes go to git's index as they are written, those holding no secret: checked here
    forked: bool  # run in workers, which write their batches' files one at a time (``one_at_a_time``)

    def __call__(self, job: Job) -> BatchResult:
        number, rels, files = job
        cfg, layout = self.cfg, self.layout
        mem, world = self.kept.pop(number, None) or _read(cfg, layout, self.today, rels, files)
        plan = make_plan(cfg, layout, world, mem, VaultScan(), {}, self.stamp, self.context)
        changes = side_changes(world, layout)[0]
        with one_at_a_time(cfg.state_dir) if self.forked else nullcontext():
            applied = write(StateFiles(cfg.state_dir), plan, self.stamp, None)
        problems = mem.problems + world.problems + plan.problems
        return BatchResult.of(plan, applied, problems, changes, world, mem, self.racy, self.fed)


@dataclass
class BatchResult:
    """What writing one batch did: everything the import keeps of it, sent back whole from a worker."""

    problems: list[Problem]
    changes: list[SideChange]
    actions: list[str]
    files_written: int
    failed: bool
    blobs: dict[str, str]  # vault path -> blob id of the note written there
    clean: list[str]  # of those, when fed to git as written, the notes whose bytes hold no secret
    blobs_fed: bytes  # and those notes' bytes, for git (``IndexFeed``)
    touched: set[str]  # scopes whose notes were written
    memory: dict[str, bytes | None]  # memory files written (None: deleted)
    read: dict[str, bytes]  # memory files too fresh for their stat, by what was read
    own: dict[str, Names]
    rows: list[UnitRow]  # the base's rows for the batch's units
    ids: list[tuple[str, str]]

    @classmethod
    def of(
        cls,
        plan: Plan,
        applied: ApplyOutcome,
        problems: list[Problem],
        changes: list[SideChange],
        world: World,
        mem: MemoryScan,
        racy: set[str],
        fed: bool,
    ) -> BatchResult:
        blobs: dict[str, str] = {}
        clean: list[str] = []
        fed_data: list[bytes] = []
        touched: set[str] = set()
        memory: dict[str, bytes | None] = {}
        for action in applied.done:
            if action.side == "vault":
                blobs[action.shown] = blob_id(action.data or b"")
                touched.update(scope_of(k) for k in action.keys)
                if fed and action.data is not None and not scan_bytes(action.data):
                    clean.append(action.shown)
                    fed_data.append(action.data)
            else:
                memory[action.shown] = action.data if action.op == "write" else None
        return cls(
            problems + applied.problems,
            changes,
            [a.describe() for a in plan.actions],
            sum(1 for a in applied.done if a.op == "write"),
            bool(applied.failed_keys),
            blobs,
            clean,
            fast_import_blobs(fed_data),
            touched,
            memory,
            racy_reads(mem, racy),
            plan.own,
            unit_rows({k: v for k, v in plan.upserts.items() if k not in applied.failed_keys}),
            world.ids(),
        )


def _checked(repo: VaultRepo, clean: set[str], blobs: dict[str, str]) -> set[str]:
    """The notes the commit need not read again for secrets: those git's index holds as the import wrote them.

    A note changed after it was written (by the person, by Obsidian) is read again: what is committed is
    what git holds, and that is not what was checked.
    """
    if not clean:
        return set()
    try:
        return clean - repo.unlike(blobs)
    except GitFailed:
        return set()


def racy_reads(mem: MemoryScan, racy: set[str]) -> dict[str, bytes]:
    read = {f.mem_path: f.raw for f in mem.files.values() if f.mem_path in racy}
    for entity in mem.entities.values():
        summary = entity.summary.raw if entity.summary else None
        for name, raw in (("items.json", entity.items_raw), ("summary.md", summary)):
            key = f"life/{entity.rel}/{name}"
            if key in racy and raw is not None:
                read[key] = raw
    return read
