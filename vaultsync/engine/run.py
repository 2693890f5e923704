"""One sync pass, under the lock the write path holds: either see from the last settled pass's snapshot that
nothing changed, or choose the strategy (``_choose``): scoped (``scoped.py``), first import
(``first_import.py``), in batches (``batched.py``) or whole (``full.py``).

Only what the quick answer needs is imported here; the full pass (git, YAML, the merge) is imported when there
is work, so the common hourly pass with nothing to do starts in the time a bare interpreter does.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from vaultsync.config import Config
from vaultsync.engine.quick import QuickCheck
from vaultsync.model import Report
from vaultsync.options import PassOptions
from vaultsync.state.snapshot import QuickFindings
from vaultsync.state.stat_walk import MemoryWalk, walk_memory


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
    return _choose(cfg, options, report, walk, seen)


def _choose(cfg: Config, options: PassOptions, report: Report, walk: MemoryWalk, seen: QuickFindings | None) -> Report:
    """The one place a pass's strategy is chosen, in this order: a scoped pass over what ``seen`` (the quick
    check's findings) touches, when that is safe; a first import into an empty vault; a full pass in batches
    over a larger memory; else the whole pass at once. Their modules load only when chosen. Before any, the
    vault's repository must be one a pass may write to (not mid-merge, not on a detached HEAD)."""
    from vaultsync.core.scope import SCOPE_MAX
    from vaultsync.engine.finish import open_repo
    from vaultsync.engine.full import first_import, run_whole
    from vaultsync.engine.prepare import PassContext, changed_layout
    from vaultsync.engine.scoped import narrow_pass
    from vaultsync.state.base import BaseStore, BaseUnreadable
    from vaultsync.state.files import StateFiles
    from vaultsync.vault.layout import VaultLayout

    if open_repo(cfg, report) is None:
        # The repository's state comes first: an old commit checked out looks like a side emptied, and the
        # guards' ``--yes`` would only meet this stop.
        return report
    layout = VaultLayout(cfg.layout)
    try:
        store = BaseStore(StateFiles(cfg.state_dir).base, read_only=options.dry_run)
    except BaseUnreadable as exc:
        report.stopped = str(exc)
        return report
    setting = PassContext(cfg, options, layout, store, options.today or date.today(), walk)
    try:
        report.stopped = changed_layout(cfg, store)
        if report.stopped:
            report.stopped += "; nothing was written"
            return report
        narrowed = narrow_pass(cfg, layout, store, seen) if seen is not None else None
        if narrowed is not None:
            scoped = Report(dry_run=report.dry_run, scoped=True)  # a widened attempt leaves no trace
            if run_whole(setting, scoped, narrowed) is not None:
                return scoped
            reach = narrowed.context.reach
            wider = len(narrowed.scope.rels | reach) + len(narrowed.scope.files)
            if reach and seen is not None and wider <= SCOPE_MAX:
                # An entity created, renamed or deleted is named by these unread ones: read them too, once.
                narrowed = narrow_pass(cfg, layout, store, seen, reach, narrowed)
                scoped = Report(dry_run=report.dry_run, scoped=True)
                if narrowed is not None and run_whole(setting, scoped, narrowed) is not None:
                    return scoped
        if walk.named is not None:
            # The full pass reads every memory file, so the snapshot it records is what a walk of every file
            # finds, taken now, before its scan; the named walk vouched only for a scoped pass.
            setting = replace(setting, walk=walk_memory(cfg.workspace, cfg.life))
        from vaultsync.engine.batched import run_batched  # a scoped pass, the common one, does without it

        result = first_import(setting, report) or run_batched(setting, report) or run_whole(setting, report, None)
        assert result is not None
        return result
    finally:
        store.close()
