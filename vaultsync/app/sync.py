"""The sync use cases every face calls: one pass both ways, or a look at what a pass would do.

A face (the command line now; the HTTP API, the MCP server and watch mode later) builds ``PassOptions`` and
calls these; the lock, the quick check and the choice of pass stay below, in ``vaultsync.engine``.
"""

from __future__ import annotations

from dataclasses import replace

from vaultsync.config import Config
from vaultsync.engine.options import PassOptions
from vaultsync.engine.run import run_pass
from vaultsync.fs import LockHeld
from vaultsync.model import Report

__all__ = ["LockHeld", "PassOptions", "status", "sync"]


def sync(cfg: Config, options: PassOptions | None = None) -> Report:
    """One pass in both directions under the run lock; raises ``LockHeld`` when another pass holds it.

    A pass that read and wrote something brings the recall index up to date with what it left in the memory
    tree; the quick no-change pass has nothing to add and does not even import it.
    """
    report = run_pass(cfg, options or PassOptions())
    if not (report.quick or report.dry_run or report.stopped):
        from vaultsync.app.recall import refresh_after_pass

        refresh_after_pass(cfg)
    return report


def status(cfg: Config, options: PassOptions | None = None) -> Report:
    """What the next pass would do and the conflicts still open, without writing anything."""
    return run_pass(cfg, replace(options or PassOptions(), dry_run=True))
