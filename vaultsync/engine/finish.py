"""The end of every pass, written once (``finish``): what a strategy decided (``Decided``: the person's edits,
its plans in order, and what the end needs once they are written) goes to git and the disk here, in the one
order that keeps a pass safe to kill at any moment. The strategies (``full.py``, ``batched.py``,
``first_import.py``) only read, decide and plan; a pass in batches hands its batches one at a time, so memory
follows the batch, and a first import's forked workers apply their own (``write``), listed as uncommitted first.
Also here: the commits themselves, which leave out any file holding a secret, and a change's own commits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultsync.config import Config
from vaultsync.core.changes import message, unchanged_notes
from vaultsync.core.plan import Plan
from vaultsync.core.units import World
from vaultsync.engine.actors import Keyed, carried, shares
from vaultsync.engine.apply import ApplyOutcome, apply_plan
from vaultsync.engine.prepare import PassContext
from vaultsync.engine.quick import SnapshotUpdate, record
from vaultsync.errors import NotARepository
from vaultsync.git.index import blob_id
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import Author, GitFailed
from vaultsync.git.secrets import scan_bytes
from vaultsync.keys import scope_of
from vaultsync.model import AGENT, PERSON, Actor, Problem, Report, Severity, SideChange
from vaultsync.state import actors, snapshot
from vaultsync.state.base import BaseEntry, BaseStore, UnitRow
from vaultsync.state.files import StateFiles
from vaultsync.state.stat_walk import MemoryWalk
from vaultsync.system import disk
from vaultsync.system.fs import set_aside

Rows = tuple[Mapping[str, BaseEntry], Iterable[str], Iterable[tuple[str, str]], Iterable[UnitRow]]


@dataclass
class Step:
    """One plan a strategy decided (a whole pass's, or one batch's), handed to ``finish`` in order."""

    plan: Plan | None  # None: written already, by a first import's forked worker (``write``)
    written: Callable[[ApplyOutcome | None], Rows]  # keeps what the strategy needs of the writes; their base rows
    progress: Callable[[int, int], None] | None = None


@dataclass
class BaseSave:
    """What the base keeps of a pass besides its units' rows: the conflict copies, those resolved, the notes
    said once, and whether to compact the file (after a first import)."""

    conflicts: Mapping[str, tuple[str, str]] | None = None
    resolved: Iterable[str] = ()
    reported: Iterable[str] = ()
    compact: bool = False


@dataclass
class Recording:
    """What the snapshot of a settled pass is made of (``quick.record`` says what each is): the memory walk,
    the memory files written and those read too fresh for their stat, the vault's notes as the pass leaves them
    (asked for only when the pass settled), the notes left alone, the entities' names, a scoped pass's patch."""

    walk: MemoryWalk
    written: dict[str, bytes | None]
    read: dict[str, bytes]
    notes: Callable[[], dict[str, str]]
    left_alone: list[str]
    entities: dict[str, list[object]]
    patch: SnapshotUpdate | None = None


@dataclass
class Closing:
    """What the agent's commit, the base and the snapshot need, known once every plan is written: the agent's
    paths, changes and scopes touched, the notes git's index holds as checked for secrets, the conflict copies
    left open, and the snapshot (None: a write failed or the pass ended early)."""

    agent: tuple[set[str], Keyed, list[str]]
    base: BaseSave
    opened: list[str]
    recording: Recording | None
    checked: Collection[str] = ()


@dataclass
class Decided:
    """What a strategy decided: the person's edits (paths, changes), what killed passes left behind, the
    pass's time stamp, its plans in order (produced one batch at a time, so memory follows the batch), what
    the end needs once they are written, and the notes listed as uncommitted before any is written, for
    workers that write on their own."""

    person: tuple[set[str], list[SideChange]]
    leftovers: list[Path]
    stamp: str
    steps: Iterable[Step]
    closing: Callable[[], Closing]
    listed: Iterable[str] = ()


def finish(setting: PassContext, repo: VaultRepo, report: Report, decided: Decided) -> bool:
    """The end of every pass, in the one order that makes it safe to kill at any moment.

    1. The person's edits committed as the person: their words are in git whatever happens next.
    2. The snapshot dropped (files change from here; only a settled pass records one) and the leftovers of
       killed passes set aside.
    3. Each plan's vault notes listed in ``uncommitted.json``, then the plan applied, and its units' rows kept
       in the base's open transaction.
    4. The agent's commit; then the base saved and committed; then the list of uncommitted notes cleared.
    5. The snapshot recorded, when the pass settled.

    False when git refused a commit (the reason is in the report). A pass killed before step 4 ends leaves the
    base as it was and the notes listed, for the next pass to commit.
    """
    cfg, store, files = setting.cfg, setting.store, setting.files
    if not _commit_person(setting, repo, report, *decided.person):
        return False
    snapshot.forget(files)
    set_aside(decided.leftovers, (cfg.vault, cfg.workspace, cfg.life), files.trash(decided.stamp))
    if decided.listed:
        files.list_uncommitted(set(decided.listed))
        decided.listed = ()  # a path per note: not held through the writes
    uncommitted: set[str] | None = None  # read when the first plan is applied here
    for step in decided.steps:
        applied = None
        if step.plan is not None:
            uncommitted = files.uncommitted_notes() if uncommitted is None else uncommitted
            applied = write(files, step.plan, decided.stamp, uncommitted, step.progress)
        upserts, deletes, ids, rows = step.written(applied)
        store.save(upserts, deletes, ids, rows=rows, commit=False)
    end = decided.closing()
    if not _commit_agent(setting, repo, report, *end.agent, end.checked):
        return False
    base = end.base
    store.save({}, [], (), base.conflicts, base.resolved, base.reported, commit=False, layout=cfg.layout.as_json())
    store.commit()
    if base.compact:
        store.compact()
    files.all_committed()
    if end.recording is not None and settled(report) and not report.scoped:
        actors.settle(files, actors.pending(files))  # a whole pass carried every change: no actor waits
    report.open_conflicts = end.opened
    if end.recording is not None and settled(report):
        r = end.recording
        standing = [p for p in report.problems if p.standing]
        record(cfg, r.walk, r.written, r.read, r.notes(), r.left_alone, end.opened, r.entities, standing, r.patch)
    return True


def keep_ids(store: BaseStore, ids: Iterable[tuple[str, str]]) -> None:
    """Keep the fact ids of a batch the first walk of a pass in batches found nothing to write in, in the
    base's open transaction, so the second walk need not hold them; ``finish`` commits it, or nothing does."""
    store.save({}, [], ids, commit=False)


def write(
    files: StateFiles,
    plan: Plan,
    stamp: str,
    uncommitted: set[str] | None,
    progress: Callable[[int, int], None] | None = None,
) -> ApplyOutcome:
    """Apply one plan. Its vault notes join ``uncommitted`` (the notes written but not yet committed, by this
    pass or a killed or refused earlier one), listed on disk before any is written, so whichever pass next
    commits for the agent takes them all. None: ``finish`` listed them already (a first import's workers)."""
    if uncommitted is not None:
        planned = {a.shown for a in plan.actions if a.side == "vault"}
        if planned - uncommitted:
            uncommitted |= planned
            files.list_uncommitted(uncommitted)
    return apply_plan(plan, files.trash(stamp), progress)


def open_repo(cfg: Config, report: Report) -> VaultRepo | None:
    """The vault's repository when a pass may write to it; None (with the reason in the report) when not."""
    try:
        repo = VaultRepo(cfg.vault)
    except NotARepository as exc:  # none there, or one git refuses for its owner: the message says which
        report.stopped = str(exc)
        return None
    busy = repo.busy()
    if busy:
        report.stopped = busy + "; nothing was written"
        return None
    return repo


def _committable(repo_root: Path, paths: set[str], report: Report, checked: Collection[str] = ()) -> set[str]:
    """Leave out of the commit any file holding a secret: git history is forever. ``checked`` paths need no
    second look: git's index holds them as the pass wrote them, and what it wrote held none (they are
    committed as the index holds them, see ``VaultRepo.commit``)."""
    keep = paths.intersection(checked)
    for path in sorted(paths.difference(checked)):
        target = repo_root / path
        findings = scan_bytes(target.read_bytes()) if target.is_file() else []
        if findings:
            where = ", ".join(f"line {f.line}: {f.kind} {f.redacted}" for f in findings[:3])
            report.problems.append(
                Problem(path, f"holds a secret ({where}); synced locally but left out of git", Severity.WARNING)
            )
        else:
            keep.add(path)
    return keep


def _commit(
    repo: VaultRepo,
    root: Path,
    paths: set[str],
    text: str,
    author: Author,
    report: Report,
    checked: Collection[str] = (),
) -> bool:
    """Commit ``paths`` as ``author``; False (with the reason reported) when git refused."""
    if not paths:
        return True
    try:
        sha = repo.commit(_committable(root, paths, report, checked), text, author, staged=checked)
    except GitFailed as exc:
        report.problems.append(Problem(str(root), _why(exc.stderr, root)))
        return False
    if sha:
        report.commits.append(sha)
    return True


def _why(stderr: str, root: Path) -> str:
    """git's reason in one line; a full disk and a held lock are named, with what the person can do about it."""
    full = next((words for words in disk.FULL_WORDS if words in stderr), None)
    if full:  # before the lock: git names the lock file it failed to write
        return (
            f"git commit failed: the disk mounted at {disk.mount_of(root)} is full ({full}); free some space, "
            "then sync again: the next pass commits"
        )
    # index.lock, or a ref's lock (HEAD.lock, refs/heads/main.lock) that a killed git left behind
    lock = re.search(r"'([^']*\.lock)'", stderr)
    if lock:
        return (
            f"git commit failed: {lock.group(1)} exists (another git is running, or one was killed and left it); "
            "vaultsync does not delete it: when no git is running, delete that file and sync again"
        )
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"git commit failed: {lines[-1] if lines else 'no reason given'}"


def settled(report: Report) -> bool:
    """Nothing left for a later pass: no stop, no held change, and no error or warning but those about a file's
    own content, which stand until the file changes (the snapshot keeps them, to say again)."""
    quiet = all(p.severity is Severity.NOTE or p.standing for p in report.problems)
    return not report.stopped and not report.held and quiet


def _commit_person(
    setting: PassContext, repo: VaultRepo, report: Report, paths: set[str], changes: list[SideChange]
) -> bool:
    """Commit the person's edits as the person, before anything is written: their words are in git whatever
    happens next. False (the pass stopped, with the reason) when git refused."""
    cfg = setting.cfg
    person = repo.author(PERSON, cfg.git)
    if not _commit(repo, cfg.vault, paths, message("vault -> memory", changes), person, report):
        report.stopped = "could not commit the person's edits; nothing was written"
        return False
    return True


def unchanged_blobs(world: World, only: Container[str] | None = None) -> dict[str, tuple[str, str]]:
    """``unchanged_notes`` (of ``only``, when given), each with its unit's key and the blob id of the note as
    this pass read it."""
    notes = unchanged_notes(world)
    return {
        path: (key, blob_id(note.raw))
        for path, key in notes.items()
        if (only is None or path in only) and (note := world.units[key].vault_note) is not None
    }


def resaved(
    repo: VaultRepo, notes: Mapping[str, tuple[str, str]], leave: Collection[str]
) -> tuple[set[str], list[SideChange]]:
    """Of the notes whose units neither side changed (path -> key and the blob read, ``unchanged_blobs``), those
    the person saved again in another form (Obsidian reordering keys, dropping quotes): their bytes go in the
    person's commit, or they would stay uncommitted for good, since no pass writes them back.

    Only a note still as the pass read it counts: one changed since is a new edit, for the next pass to read.
    Left out: ``leave`` (notes a pass wrote whose agent commit is still to come) and a note holding a secret,
    kept out of git as the pass that wrote it said.
    """
    found = repo.modified(set(notes) - set(leave)) if notes else {}
    paths = {p for p, blob in found.items() if blob == notes[p][1] and not _holds_secret(repo.root / p)}
    changes = [SideChange("vault", scope_of(notes[p][0]), "re-saved") for p in sorted(paths)]
    return paths, changes


def touched_notes(cfg: Config) -> set[str]:
    """The vault's tracked files whose stat differs from git's index, found once before a pass in batches reads
    any: the only ones among its unchanged notes that can have been saved again (``resaved``)."""
    try:
        return VaultRepo(cfg.vault).touched()
    except (NotARepository, GitFailed):
        return set()  # the pass itself says why it cannot commit


def _holds_secret(path: Path) -> bool:
    try:
        return bool(scan_bytes(path.read_bytes()))
    except OSError:
        return True  # unreadable now: not committed this pass


def _commit_agent(
    setting: PassContext,
    repo: VaultRepo,
    report: Report,
    paths: set[str],
    changes: Keyed,
    touched: list[str],
    checked: Collection[str] = (),
) -> bool:
    """Commit the vault notes the pass wrote, each as the actor who made the change it carries (the agent's and
    the person's first, ``engine/actors.py``), then forget the recorded actors of what was carried; False when
    git refused (the record stays, for the pass that commits them)."""
    cfg, options, files, layout = setting.cfg, setting.options, setting.files, setting.layout
    recorded = actors.pending(files)
    default = AGENT if options.claimed else options.actor
    said = actors.subjects(files) if recorded else {}
    for share in shares(layout, recorded, default, paths, changes, touched):
        text = message("memory -> vault", share.changes, share.touched)
        subject = options.commit_subject if share.actor == options.actor else said.get(share.actor, "")
        if subject:
            text = f"{subject}\n\n{text}"
        author = repo.author(share.actor, cfg.git)
        if not _commit(repo, cfg.vault, share.paths, signed(text, share.actor), author, report, checked):
            return False
    actors.settle(files, carried(layout, recorded, paths, changes))
    return True


def signed(text: str, actor: Actor) -> str:
    """``text`` ending in the actor's trailers (``Agent: main``, ``Session: ...``), when it gave any: git keeps
    them with the commit, and ``vaultsync log`` reads them back."""
    trailers = actor.trailers()
    return f"{text.rstrip()}\n\n{trailers}" if trailers else text


def notes_once(report: Report, store: BaseStore, foreign: Iterable[str]) -> list[str]:
    """Say notes (a file vaultsync leaves alone, a folder it does not follow) once, not every hour: the report
    keeps those not said before, which are returned for the base to remember."""
    report.problems += [Problem(p, "not a vaultsync note; left alone", Severity.NOTE) for p in sorted(foreign)]
    reported = store.reported()
    fresh = sorted({p.path for p in report.problems if p.severity is Severity.NOTE} - reported)
    report.problems = [p for p in report.problems if p.severity is not Severity.NOTE or p.path in fresh]
    return fresh


def commit_files(cfg: Config, paths: Iterable[str], subject: str, actor: Actor, report: Report) -> None:
    """Commit vault files a use case wrote outside the places a pass carries (a review note, the files ``init``
    adds or adopts), as ``actor``; a file holding a secret is left out and reported, as in a pass."""
    repo = open_repo(cfg, report)
    if repo is not None:
        _commit(repo, cfg.vault, set(paths), signed(subject, actor), repo.author(actor, cfg.git), report)
