"""The sync use cases every face calls: one pass both ways, or a look at what a pass would do.

A face (the command line, watch mode, the scheduled run, the HTTP API and the MCP server) builds
``PassOptions`` and calls these; the lock, the remote round and the record of runs are the write path's
(``app/write.py``), the quick check and the choice of pass the engine's.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from vaultsync.config import Config
from vaultsync.model import Report
from vaultsync.options import PassOptions
from vaultsync.state import runs
from vaultsync.state.files import StateFiles
from vaultsync.write_path.write import LOCK_HELD, LockHeld, WriteRequest, write

__all__ = ["LOCK_HELD", "LockHeld", "PassOptions", "git_missing", "overview", "status", "summary", "sync"]


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
    """One pass in both directions through the write path, recorded as a run of ``kind``.

    Raises ``LockHeld`` when another pass holds the lock. With ``wait``, a held lock is waited out instead:
    ``wait`` is called between tries (it sleeps a little) and returns False to give up, and only the pass
    that runs is recorded, not each try.
    """
    return write(cfg, WriteRequest(kind, options=options or PassOptions(), wait=wait))


def summary(report: Report) -> str:
    """A pass in one line, as the record of runs and the watching terminal show it."""
    return report.summary()


def status(cfg: Config, options: PassOptions | None = None) -> Report:
    """What the next pass would do and the conflicts still open, without writing anything."""
    return write(cfg, WriteRequest("status", options=replace(options or PassOptions(), dry_run=True)))


def overview(cfg: Config) -> dict[str, Any]:
    """What a status light needs, without running a pass (``status`` runs one): the last run and the last that
    ran to its end, the conflict copies still open and the standing problems as the last settled pass left
    them, the changes the last pass that ran to its end held, and the schedule. Cheap at any size: it reads the
    state folder and the crontab, not the trees."""
    from vaultsync.app import schedule
    from vaultsync.state.base import BaseStore
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
        # What the last pass held (the shrink guard): each waits for ``vaultsync accept`` or ``restore``.
        "held": list(last_ok.held) if last_ok else [],
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
