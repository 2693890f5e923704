"""One sync pass as ``vaultsync sync`` runs it: take the lock, check the roots, then either see from the last
settled pass's snapshot that nothing changed, or run the full pass (``fullpass.py``).

Only what the quick answer needs is imported here; the full pass (git, YAML, the merge) is imported when there
is work, so the common hourly pass with nothing to do starts in the time a bare interpreter does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from vaultsync.config import Config
from vaultsync.fs import run_lock
from vaultsync.model import Progress, Report
from vaultsync.state.snapshot import QuickCheck, walk_memory


@dataclass(frozen=True)
class PassOptions:
    dry_run: bool = False
    confirm_deletes: bool = False
    today: date | None = None
    now: Callable[[], datetime] = datetime.now
    progress: Progress | None = None  # told of each action applied; the CLI draws a bar on a terminal
    import_batch: int = 100  # entities a first import reads and writes at a time (0: all at once)
    import_workers: int = 0  # processes a first import in batches forks (0: one per core, up to 4; 1: none)
    full_batch: int = 100  # entities a full pass over a larger memory reads and writes at a time (0: all at once)


def run_pass(cfg: Config, options: PassOptions | None = None) -> Report:
    options = options or PassOptions()
    report = Report(dry_run=options.dry_run)
    # The roots are checked before the lock, which lives in the vault: a missing vault is not created.
    missing = [n for n, p in (("workspace", cfg.workspace), ("life", cfg.life), ("vault", cfg.vault)) if not p.is_dir()]
    if missing:
        report.stopped = f"missing root folder(s): {', '.join(missing)}; check the config ({cfg.source})"
        return report
    with run_lock(cfg.state_dir / "lock"):
        check = None if options.dry_run else QuickCheck(cfg)
        walk = walk_memory(cfg.workspace, cfg.life)
        seen = check.changes(walk) if check else None
        if seen is not None and seen.nothing:
            report.open_conflicts = seen.conflicts
            report.problems = seen.problems
            report.quick = True
            return report
        from vaultsync.engine.full import run_full

        return run_full(cfg, options, report, walk, seen)
