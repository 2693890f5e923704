"""Carrying out a plan: atomic, compare-and-swap writes; memory-side deletions go to the trash first.

A write whose target changed since the scan is not done; the units that depended on it keep their old base,
so the next pass sees the new edit as a change and merges it instead of overwriting it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.fs import FileChanged, atomic_write, read_or_none, remove_checked
from vaultsync.model import Problem, Severity
from vaultsync.sync.plan import Action, Plan

Progress = Callable[[int, int], None]  # (actions done, actions in the plan)


@dataclass
class Applied:
    done: list[Action] = field(default_factory=list)
    failed_keys: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)


def _trash(action: Action, trash_dir: Path) -> None:
    """Keep a copy of a memory file before deleting it: memory has no git history of its own."""
    current = read_or_none(action.path)
    if current is None:
        return
    target = trash_dir / action.shown
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, current)


def apply_plan(plan: Plan, trash_dir: Path, progress: Progress | None = None) -> Applied:
    applied = Applied()
    total = len(plan.actions)
    for number, action in enumerate(plan.actions, 1):
        if progress:
            progress(number, total)
        if action.op == "delete" and applied.failed_keys.intersection(action.keys):
            continue  # e.g. a renamed note whose new copy could not be written keeps its old name
        try:
            if action.op == "write":
                assert action.data is not None
                if action.keep_old:
                    _trash(action, trash_dir)
                atomic_write(action.path, action.data, action.expected)
            elif action.op == "delete":
                if action.side == "memory":
                    _trash(action, trash_dir)
                remove_checked(action.path, action.expected)
            elif action.op == "move":
                assert action.dest is not None
                if action.dest.exists():
                    raise FileChanged(str(action.dest))
                action.dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(action.path, action.dest)
        except FileChanged:
            applied.failed_keys.update(action.keys)
            applied.problems.append(
                Problem(
                    action.shown,
                    "changed while the pass ran; left as it is for the next pass",
                    Severity.WARNING,
                )
            )
        except OSError as exc:
            applied.failed_keys.update(action.keys)
            applied.problems.append(Problem(action.shown, f"could not be written: {exc.strerror or exc}"))
        else:
            applied.done.append(action)
    return applied
