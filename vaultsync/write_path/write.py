"""The one write path: every change to the memory or the vault, from every face, goes through ``write``.

A use case (a sync, a remembered fact, the janitor's archive, a review fix, an extraction, ``init`` adopting a
vault) says what it wants as a ``WriteRequest``: who acts, the pass's options, and the writes it makes itself. This
module gives every one of them the same steps, in the same order:

1. the roots exist, or nothing is done;
2. take the run lock, or wait for it (an API write waits; a plain ``sync`` says the lock is held);
3. with a ``[remote]``: finish a killed merge, fetch, merge the remote's commits (``app/remote_round.py``);
4. apply the use case's writes, under the lock, after the remote's commits are in;
5. commit what the use case wrote outside the places a pass carries, as the actor (the secret guard reads it);
6. run the pass (``engine/run.py``), which guards, commits the person's edits as the person and its own
   writes as the actor;
7. push (the secret guard reads what leaves), record the run, refresh the recall index.

So an HTTP ``remember`` is on the remote when it returns (or says it is waiting, exit 6), a review fix is the
person's in ``git log``, and the janitor's pass stops on a missing folder like any ``sync``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace

from vaultsync.config import Config
from vaultsync.engine.run import missing_roots, run_pass
from vaultsync.errors import LockHeld, Stopped, VaultsyncError
from vaultsync.keys import owner_of_walk_key
from vaultsync.model import AGENT, Actor, ExitCode, Held, Report
from vaultsync.options import PassOptions
from vaultsync.state import actors, runs
from vaultsync.state.files import StateFiles
from vaultsync.system.disk import writable
from vaultsync.system.fs import read_or_none
from vaultsync.system.lock import run_lock
from vaultsync.vault.layout import VaultLayout

__all__ = ["LOCK_HELD", "LockHeld", "OwnWrites", "Stopped", "Wait", "WriteRequest", "write"]

LOCK_HELD = "another pass held the lock; nothing done"
_PAUSE = 0.02  # seconds between two tries of a held lock, for a write waiting a number of seconds

# How a held lock is met: None gives up at once (LockHeld); a number of seconds is waited out; a callable is
# called between tries (it sleeps a little) and returns False to give up.
Wait = float | Callable[[], bool] | None


@dataclass(frozen=True)
class OwnWrites:
    """What a use case wrote under the lock. ``wrote``: anything changed, so a pass carries it; ``named``: the
    only memory files changed, as walk keys (``life/areas/people/sarah/items.json``), when the use case knows
    them (the pass then stats those instead of walking the memory); ``commit``: vault files outside what a pass
    carries (a review note), committed as the actor with ``subject``."""

    wrote: bool
    named: frozenset[str] | None = None
    commit: tuple[str, ...] = ()
    subject: str = ""  # also the subject of the pass's commit, when the use case knows it only once it wrote
    deleting: frozenset[str] = frozenset()  # unit keys it deleted on purpose (``PassOptions.deleting``)
    # The units it changed (``keys``: a fact, an entity), when it knows them: their maker is recorded by unit, so
    # the agent's edits to other facts of the same entity stay the agent's. Else the files ``named`` stand for
    # their entities or themselves.
    units: frozenset[str] | None = None


@dataclass(frozen=True)
class WriteRequest:
    """What a use case asks of the write path. ``apply`` runs under the lock after the remote round; without it
    the change is a plain pass (``sync``, watch, the schedule). ``run_pass``: False for a change that only
    commits files of its own (a regenerated review note): no pass follows it."""

    kind: str  # the run's name in the record of runs: sync, watch, scheduled, remember, janitor, review, ...
    actor: Actor = AGENT
    options: PassOptions = field(default_factory=PassOptions)
    apply: Callable[[], OwnWrites] | None = None
    wait: Wait = None
    run_pass: bool = True
    # False for a write a server makes for a client (a fact, a captured turn): the server's recall reader brings
    # the index up to date before its next query, so the answer does not wait on the index while it is read.
    recall: bool = True
    # Mirrored memory files (walk keys) the change appends to for a program or the person: edits of them no pass
    # has carried yet (the agent's own lines in today's daily note) are first committed by a pass as the agent,
    # so the change's commit holds only what it added.
    settle_first: frozenset[str] = frozenset()


def write(cfg: Config, change: WriteRequest) -> Report:
    """Make ``change`` with every guarantee a pass gives; the report of its pass (or of the stop).

    Raises ``LockHeld`` when the lock stays held past ``change.wait``, ``Stopped`` when a use case's writes
    find a root missing, and whatever ``change.apply`` raises (nothing of the pass is then run)."""
    options = replace(change.options, actor=change.actor)
    report = Report(dry_run=options.dry_run)
    record = not options.dry_run
    report.stopped = missing_roots(cfg)
    if report.stopped:
        if change.apply is not None:
            raise Stopped(report.stopped)
        _record(cfg, change.kind, report.exit_code, report.summary(), record)
        return report
    try:
        with ExitStack() as held:
            try:
                # A look that writes nothing needs no lock where none can be made: on a read-only vault (a mounted
                # snapshot) no change can be written either, and ``status`` still answers.
                if not (options.dry_run and not writable(cfg.state_dir)):
                    _take_lock(cfg, held, change.wait)
            except LockHeld:
                _record(cfg, change.kind, ExitCode.LOCKED, LOCK_HELD, record and change.wait is None)
                raise
            report, passed = _locked(cfg, change, options, report)
    except VaultsyncError:
        raise  # a caller's mistake or a busy lock, said to the caller: not a failed run
    except Exception as exc:
        _record(cfg, change.kind, 1, f"failed: {type(exc).__name__}: {exc}", record)  # 1: an uncaught exception
        raise
    kept = record and (passed or bool(report.stopped))
    _record(cfg, change.kind, report.exit_code, report.summary(), kept, report.held)
    fresh = report.quick and StateFiles(cfg.state_dir).recall.exists()
    if passed and change.recall and not (report.dry_run or report.stopped or fresh):
        # What the pass left in the memory tree goes into the recall index, built here when missing so that no
        # query waits for it; the quick no-change pass with an index has nothing to add and does not import it.
        from vaultsync.write_path.recall_refresh import refresh_after_pass

        refresh_after_pass(cfg)
    return report


def _locked(cfg: Config, change: WriteRequest, options: PassOptions, report: Report) -> tuple[Report, bool]:
    """Steps 3 to 7 under the lock; the report, and whether a pass ran."""
    passed = False
    remote = _remote_round(cfg, options)
    report.stopped = (remote.before() if remote is not None else None) or ""
    if not report.stopped:
        if remote is not None:
            options = replace(options, conflicts=tuple(remote.found.conflicts))
        _settle_first(cfg, change, options, report)
        applied = change.apply() if change.apply is not None else None
        if applied is not None and applied.wrote and change.run_pass and not options.dry_run:
            options = _claim(cfg, applied, options)
        if applied is not None and applied.commit and not options.dry_run:
            from vaultsync.engine.finish import commit_files  # git and the secret guard: only when there are files

            commit_files(cfg, applied.commit, applied.subject, change.actor, report)
        if applied is None or (applied.wrote and change.run_pass):
            if applied is not None:
                options = replace(
                    options,
                    changed_memory=applied.named if applied.named is not None else options.changed_memory,
                    commit_subject=options.commit_subject or applied.subject,
                    deleting=options.deleting | applied.deleting,
                )
            done = run_pass(cfg, options)
            done.commits[:0] = report.commits
            done.problems[:0] = report.problems
            report, passed = done, True
    if remote is not None:
        remote.after(report)
    return report, passed


def _settle_first(cfg: Config, change: WriteRequest, options: PassOptions, report: Report) -> None:
    """Before a program's (or the person's) append to a mirrored file, a pass as the agent commits what others
    changed in it since the last pass (``WriteRequest.settle_first``); its commits lead the report's."""
    keys = change.settle_first
    if keys and options.actor != AGENT and not options.dry_run and _unsettled(cfg, keys):
        first = run_pass(cfg, replace(options, actor=AGENT, changed_memory=keys))
        report.commits += first.commits
        report.problems += first.problems


def _unsettled(cfg: Config, keys: frozenset[str]) -> bool:
    """Whether any of the mirrored memory files ``keys`` differs from its note in the vault, which a pass copies
    byte for byte: someone changed one side since the last pass carried it."""
    layout = VaultLayout(cfg.layout)
    for key in keys:
        root, _, rest = key.partition("/")
        note = layout.file_note(key)
        if note is None or root not in ("workspace", "life"):
            continue
        memory = read_or_none((cfg.workspace if root == "workspace" else cfg.life) / rest)
        if memory != _mirror(cfg, layout, note):
            return True
    return False


def _mirror(cfg: Config, layout: VaultLayout, note: str) -> bytes | None:
    """The note's bytes where a pass keeps it: a daily note may sit in a date folder (``Daily/2026/11/``)."""
    found = read_or_none(cfg.vault / note)
    name = note.rsplit("/", 1)[-1]
    if found is None and layout.daily_of_note(note) is not None:
        folder = cfg.vault / layout.daily_dir
        kept = [p for p in folder.glob(f"*/**/{name}") if layout.daily_of_note(p.relative_to(cfg.vault).as_posix())]
        found = read_or_none(kept[0]) if len(kept) == 1 else None
    return found


def _claim(cfg: Config, applied: OwnWrites, options: PassOptions) -> PassOptions:
    """Record who made the memory changes the use case names, before the pass that carries them: a pass that
    cannot commit them (git busy, a detached HEAD, a kill) leaves them to a later one, which commits them as
    this actor (``state/actors.py``); every other change the pass finds stays the agent's."""
    units = applied.units
    if units is None and applied.named is not None:
        units = frozenset(owner_of_walk_key(key) for key in applied.named)
    if units is None or options.actor == AGENT:
        return options
    actors.claim(StateFiles(cfg.state_dir), units, options.actor, options.commit_subject or applied.subject)
    return replace(options, claimed=True)


def _remote_round(cfg: Config, options: PassOptions):  # type: ignore[no-untyped-def]
    """With a ``[remote]``, the change is wrapped in fetch-merge before and push after; a vault without one
    never loads the remote's code."""
    if cfg.remote is None:
        return None
    from vaultsync.write_path.remote_round import RemoteRound

    return RemoteRound(cfg, options)


def _take_lock(cfg: Config, held: ExitStack, wait: Wait) -> None:
    """Hold the run lock: the only place that takes it, so no change can write around another."""
    deadline = time.monotonic() + wait if isinstance(wait, int | float) else 0.0
    lock = StateFiles(cfg.state_dir).lock
    while True:
        try:
            held.enter_context(run_lock(lock))
            return
        except LockHeld:
            if wait is None:
                raise
            if callable(wait):
                if not wait():
                    raise
            elif time.monotonic() >= deadline:
                raise
            else:
                time.sleep(_PAUSE)


def _record(cfg: Config, kind: str, code: int, summary: str, record: bool, held: Sequence[Held] = ()) -> None:
    if record:
        shown = [h.as_json() for h in held]
        runs.record(cfg.state_dir, runs.Run(runs.now_stamp(), kind, int(code), summary, shown))
