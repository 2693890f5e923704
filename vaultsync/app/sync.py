"""The sync use cases every face calls: one pass both ways, or a look at what a pass would do.

A face (the command line, watch mode, the scheduled run; the HTTP API and the MCP server later) builds
``PassOptions`` and calls these; the lock, the quick check and the choice of pass stay below, in
``vaultsync.engine``. Every real pass is recorded here (``vaultsync.state.runs``), whichever face started it,
so ``status`` can say when the last one ran and how it ended.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from vaultsync.config import Config
from vaultsync.engine.options import PassOptions
from vaultsync.engine.run import Around, run_pass
from vaultsync.fs import LockHeld
from vaultsync.model import ExitCode, Report
from vaultsync.state import runs
from vaultsync.state.files import StateFiles

__all__ = ["LockHeld", "PassOptions", "git_missing", "overview", "status", "summary", "sync"]

LOCK_HELD = "another pass held the lock; nothing done"


def git_missing() -> str | None:
    """What to do when no ``git`` program is on PATH (None when there is one).

    Every commit and check runs ``git`` by name, so PATH is how vaultsync is pointed at it; saying so up front
    beats a pass that reads a vault without git as "not a repository" or an import error deep in GitPython.
    """
    if shutil.which("git"):
        return None
    return (
        "git was not found on PATH; install git, or add the folder holding it to PATH for vaultsync "
        "(e.g. PATH=/opt/git/bin:$PATH vaultsync sync); a schedule installed afterwards records that PATH"
    )


def sync(
    cfg: Config,
    options: PassOptions | None = None,
    kind: str = "sync",
    wait: Callable[[], bool] | None = None,
) -> Report:
    """One pass in both directions under the run lock, recorded as a run of ``kind``.

    Raises ``LockHeld`` when another pass holds the lock. With ``wait``, a held lock is waited out instead:
    ``wait`` is called between tries (it sleeps a little) and returns False to give up, and only the pass
    that runs is recorded, not each try.
    """
    options = options or PassOptions()
    while True:
        try:
            report = run_pass(cfg, options, _around(cfg, options))
        except LockHeld:
            if wait is not None and wait():
                continue
            if wait is None:
                _record(cfg, kind, ExitCode.LOCKED, LOCK_HELD)
            raise
        except Exception as exc:
            _record(cfg, kind, 1, f"failed: {type(exc).__name__}: {exc}")  # 1: what an uncaught exception exits
            raise
        if not options.dry_run:
            _record(cfg, kind, report.exit_code, runs.summarize(report))
        if not (report.dry_run or report.stopped) and not (report.quick and StateFiles(cfg.state_dir).recall.exists()):
            # What the pass left in the memory tree goes into the recall index, built here when missing so that
            # no query waits for it; the quick no-change pass with an index has nothing to add and does not even
            # import it.
            from vaultsync.app.recall import refresh_after_pass

            refresh_after_pass(cfg)
        return report


def summary(report: Report) -> str:
    """A pass in one line, as the record of runs and the watching terminal show it."""
    return runs.summarize(report)


def _record(cfg: Config, kind: str, code: int, summary: str) -> None:
    runs.record(cfg.state_dir, runs.Run(runs.now_stamp(), kind, int(code), summary))


def status(cfg: Config, options: PassOptions | None = None) -> Report:
    """What the next pass would do and the conflicts still open, without writing anything."""
    options = replace(options or PassOptions(), dry_run=True)
    return run_pass(cfg, options, _around(cfg, options))


def _around(cfg: Config, options: PassOptions) -> Around | None:
    """With a ``[remote]``, the pass is wrapped in fetch-merge before and push after (``app/remote.py``)."""
    if cfg.remote is None:
        return None
    from vaultsync.app.remote import RemoteRound  # a vault without a remote never loads it

    return RemoteRound(cfg, options)


def overview(cfg: Config) -> dict[str, Any]:
    """What a status light needs, without running a pass (``status`` runs one): the last run and the last that
    ran to its end, the conflict copies still open and the standing problems as the last settled pass left
    them, and the schedule. Cheap at any size: it reads the state folder and the crontab, not the trees."""
    from vaultsync.app import schedule
    from vaultsync.state.base import BaseStore
    from vaultsync.state.files import StateFiles
    from vaultsync.state.snapshot import load

    files = StateFiles(cfg.state_dir)
    conflicts: list[str] = []
    if files.base.exists():
        store = BaseStore(files.base, read_only=True)
        try:
            conflicts = sorted(store.conflicts())
        finally:
            store.close()
    saved = load(cfg, files) or {}
    problems = [{"path": p, "message": m, "severity": s} for p, m, s in saved.get("problems", [])]
    last, last_ok = runs.last(cfg.state_dir), runs.last_ok(cfg.state_dir)
    found = schedule.status(schedule.absolute_config(cfg.source), cfg) if cfg.source else None
    return {
        "last_run": asdict(last) if last else None,
        "last_finished": asdict(last_ok) if last_ok else None,
        "open_conflicts": conflicts,
        "problems": problems,
        "schedule": {
            "entries": found.entries if found else [],
            "every": found.every if found else "",
            "next_run": found.next_run.isoformat(timespec="minutes") if found and found.next_run else None,
            "stale": bool(found and found.stale),
        },
    }


def recent_runs(cfg: Config) -> list[dict[str, Any]]:
    """The recorded runs, oldest first, as JSON objects (``at``, ``kind``, ``exit_code``, ``summary``)."""
    return [asdict(run) for run in runs.history(cfg.state_dir)]
