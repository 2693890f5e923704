"""One sync pass as ``vaultsync sync`` runs it: take the lock, check the roots, then either see from the last
settled pass's snapshot that nothing changed, or run the full pass (``full.py``).

Only what the quick answer needs is imported here; the full pass (git, YAML, the merge) is imported when there
is work, so the common hourly pass with nothing to do starts in the time a bare interpreter does.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from vaultsync.config import Config
from vaultsync.disk import writable
from vaultsync.engine.options import PassOptions
from vaultsync.engine.quick import QuickCheck
from vaultsync.fs import run_lock
from vaultsync.model import Report
from vaultsync.state.files import StateFiles
from vaultsync.state.walk import walk_memory


class Around(Protocol):
    """Steps a use case runs under the pass's own lock, before the quick check and after the pass (the git
    remote: fetch and merge before, push after), so no other pass can run in between. ``before`` may give a
    reason to stop (the pass then writes nothing, exit 4); ``after`` gets the pass's report and adds what
    ``before`` found to it."""

    def before(self) -> str | None: ...

    def after(self, report: Report) -> None: ...


def run_pass(
    cfg: Config, options: PassOptions | None = None, around: Around | None = None, *, lock_held: bool = False
) -> Report:
    """One pass under the run lock. ``lock_held``: the caller already holds it (a memory write that edited
    ``items.json`` under the lock and must sync before any other pass starts); flock locks belong to an open
    file, so taking it again here would meet the caller's own lock."""
    options = options or PassOptions()
    report = Report(dry_run=options.dry_run)
    # The roots are checked before the lock, which lives in the vault: a missing vault is not created.
    missing = [n for n, p in (("workspace", cfg.workspace), ("life", cfg.life), ("vault", cfg.vault)) if not p.is_dir()]
    if missing:
        report.stopped = f"missing root folder(s): {', '.join(missing)}; check the config ({cfg.source})"
        return report
    # A pass that writes nothing needs no lock where none can be made: on a read-only vault (a mounted snapshot)
    # no pass can write either, and ``status`` still answers.
    unlocked = lock_held or (options.dry_run and not writable(cfg.state_dir))
    with contextlib.nullcontext() if unlocked else run_lock(StateFiles(cfg.state_dir).lock):
        if around is None:
            return _locked(cfg, options, report)
        report.stopped = around.before() or ""
        done = report if report.stopped else _locked(cfg, options, report)
        around.after(done)
        return done


def _locked(cfg: Config, options: PassOptions, report: Report) -> Report:
    check = None if options.dry_run else QuickCheck(cfg)
    walk = check.named_walk(options.changed_memory) if check and options.changed_memory is not None else None
    if walk is None:
        walk = walk_memory(cfg.workspace, cfg.life)
    seen = check.changes(walk) if check else None
    if seen is not None and seen.nothing:
        report.open_conflicts = seen.conflicts
        report.problems = seen.problems
        report.quick = True
        return report
    from vaultsync.engine.full import run_full

    return run_full(cfg, options, report, walk, seen)
