"""One sync pass, under the lock the write path holds: either see from the last settled pass's snapshot that
nothing changed, or run the full pass (``full.py``).

Only what the quick answer needs is imported here; the full pass (git, YAML, the merge) is imported when there
is work, so the common hourly pass with nothing to do starts in the time a bare interpreter does.
"""

from __future__ import annotations

from vaultsync.config import Config
from vaultsync.engine.quick import QuickCheck
from vaultsync.model import Report
from vaultsync.options import PassOptions
from vaultsync.state.walk import walk_memory


def run_pass(cfg: Config, options: PassOptions | None = None) -> Report:
    """One pass; the caller holds the run lock (``app/write.py``, the only place that takes it) and has checked
    that the roots exist."""
    options = options or PassOptions()
    report = Report(dry_run=options.dry_run)
    report.stopped = missing_roots(cfg)
    return report if report.stopped else _locked(cfg, options, report)


def missing_roots(cfg: Config) -> str:
    """Why nothing may be done because a root folder is missing, or "". Checked before the lock, which lives in
    the vault: a missing vault is never created."""
    missing = [n for n, p in (("workspace", cfg.workspace), ("life", cfg.life), ("vault", cfg.vault)) if not p.is_dir()]
    return f"missing root folder(s): {', '.join(missing)}; check the config ({cfg.source})" if missing else ""


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
