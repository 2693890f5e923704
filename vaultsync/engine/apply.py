"""Carrying out a plan: atomic, compare-and-swap writes; memory-side deletions go to the trash first.

A write whose target changed since the scan is not done; the units that depended on it keep their old base,
so the next pass sees the new edit as a change and merges it instead of overwriting it.
"""

from __future__ import annotations

import shutil
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.core.plan import Action, Plan
from vaultsync.errors import FileChanged
from vaultsync.model import Problem, Progress, Severity
from vaultsync.state.entry import BaseEntry
from vaultsync.system.fs import (
    Replaced,
    WrittenLate,
    atomic_write,
    put,
    read_or_none,
    remove_checked,
    settle,
    stage,
    sync_all,
)

# The vault, then memory: memory has no history of its own, so its files are written only for units whose notes
# were written. (Folder moves go before everything.)
ORDER = {
    ("memory", "move"): 0,
    ("vault", "write"): 1,
    ("vault", "delete"): 1,
    ("memory", "write"): 2,
    ("memory", "delete"): 2,
}
CHANGED_MEANWHILE = "changed while the pass ran; left as it is for the next pass"
# Replaced and deleted files held open for a last look (``fs.settle``), the oldest settled first once there are
# more: a pass may write tens of thousands of files, and each held file is an open descriptor.
HOLD = 64


@dataclass
class ApplyOutcome:
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


def apply_plan(plan: Plan, trash_dir: Path, progress: Progress | None = None) -> ApplyOutcome:
    """Move folders, stage every write, flush once, then put each in place with its compare-and-swap, and flush.

    Folder moves come first: a write staged into a moved entity's new folder would otherwise create that folder
    and block the move. The first flush makes the new contents durable before any rename exposes them (no empty
    note after a power cut); the second makes the renames durable before the caller records the new base. The
    files the pass replaced or deleted get their last look after the second flush, which gives a writer caught between
    opening a file and writing to it time to finish; a write found there is put back and flushed too.
    """
    applied = ApplyOutcome()
    total = len(plan.actions)
    numbered = list(enumerate(plan.actions, 1))
    staged: dict[int, Path] = {}
    held: deque[tuple[Replaced, Action]] = deque()
    try:
        for _, action in numbered:
            if action.op == "move":
                _attempt(applied, action, None, trash_dir, plan.keep_dirs, held)
        for number, action in numbered:
            if progress:
                progress(number, total)
            if action.op == "write":
                assert action.data is not None
                try:
                    staged[number] = stage(action.path, action.data, new=action.expected is None)
                except OSError as exc:
                    _failed(applied, action, f"could not be written: {exc.strerror or exc}")
        sync_all()
        for number, action in sorted(numbered, key=lambda item: ORDER[item[1].side, item[1].op]):
            if action.op == "move" or (action.op == "write" and number not in staged):
                continue
            if applied.failed_keys.intersection(action.keys):
                # A unit one of whose files could not be written waits whole for the next pass: writing the
                # rest (items.json after its note changed again) would make vaultsync's own write look like an
                # edit, or overwrite a note before the copy of the person's version exists.
                applied.failed_keys.update(action.keys)
                continue
            _attempt(applied, action, staged.pop(number, None), trash_dir, plan.keep_dirs, held)
            while len(held) > HOLD:
                _settle(applied, *held.popleft(), trash_dir)
        sync_all()
    finally:
        for tmp in staged.values():  # staged but never put in place: a failure or an exception on the way
            tmp.unlink(missing_ok=True)
        put_back = False
        while held:
            put_back |= _settle(applied, *held.popleft(), trash_dir)
    if put_back:
        sync_all()
    return applied


def _attempt(
    applied: ApplyOutcome,
    action: Action,
    tmp: Path | None,
    trash_dir: Path,
    keep_dirs: set[Path],
    held: deque[tuple[Replaced, Action]],
) -> None:
    try:
        replaced = _carry_out(action, tmp, trash_dir, keep_dirs)
    except (FileChanged, OSError) as exc:
        if tmp:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, FileChanged):
            _failed(applied, action, CHANGED_MEANWHILE, Severity.WARNING)
        else:
            _failed(applied, action, f"could not be written: {exc.strerror or exc}")
    else:
        applied.done.append(action)
        if replaced:
            held.append((replaced, action))


def _settle(applied: ApplyOutcome, replaced: Replaced, action: Action, trash_dir: Path) -> bool:
    """The last look at a file the pass replaced or deleted; True when a late write to it was put back."""
    try:
        settle(replaced)
    except WrittenLate as exc:
        kept = trash_dir / "late" / action.shown
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(kept, exc.data)
        except OSError as error:
            why = f"was written to as the pass replaced it; that version could not be kept: {error}"
            _undone(applied, action, why, Severity.ERROR)
        else:
            _undone(
                applied, action, f"was written to as the pass replaced it, and anew since; that version is in {kept}"
            )
    except FileChanged:
        _undone(applied, action, CHANGED_MEANWHILE)
        return True
    except OSError as exc:
        _undone(applied, action, f"could not be checked after it was written: {exc.strerror or exc}", Severity.ERROR)
    return False


def _undone(applied: ApplyOutcome, action: Action, why: str, severity: Severity = Severity.WARNING) -> None:
    """A write that no longer stands: its unit keeps its old base, and the next pass merges what is there."""
    applied.done.remove(action)
    _failed(applied, action, why, severity)


def _carry_out(action: Action, tmp: Path | None, trash_dir: Path, keep_dirs: set[Path]) -> Replaced | None:
    if action.op == "write":
        assert tmp is not None and action.data is not None
        if action.keep_old:
            _trash(action, trash_dir)
        return put(tmp, action.path, action.expected, action.data)
    elif action.op == "delete":
        if action.side == "memory":
            _trash(action, trash_dir)
        return remove_checked(action.path, action.expected, keep_dirs)
    elif action.op == "move":
        assert action.dest is not None
        if action.dest.exists():
            raise FileChanged(str(action.dest))
        action.dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(action.path, action.dest)
    return None


def _failed(applied: ApplyOutcome, action: Action, why: str, severity: Severity = Severity.ERROR) -> None:
    applied.failed_keys.update(action.keys)
    applied.problems.append(Problem(action.shown, why, severity))


def kept_upserts(plan: Plan, applied: ApplyOutcome, failed: set[str]) -> dict[str, BaseEntry]:
    """The base rows a pass records once ``plan`` is applied: those of the units written whole, and for a mirrored
    file whose note now holds the pass's result while its memory write was refused (the agent rewrote the file
    after the pass read it: dreaming, a consolidation), the file as the pass read it.

    That version is what both sides descend from now: the note is it plus the person's edits, the memory file it
    plus the agent's newer rewrite. Left at the older base, the note would seem to hold the agent's earlier
    changes as edits of its own, which the rewrite changes again: a false conflict. With it, the next pass merges
    the person's edits with the rewrite as any other pair of edits.
    """
    upserts = {k: v for k, v in plan.upserts.items() if k not in failed}
    done = {id(a) for a in applied.done}
    for key, entry in plan.read_bases.items():
        if key not in failed or key in upserts:
            continue
        mine = [a for a in plan.actions if key in a.keys]
        memory_refused = any(a.side == "memory" and id(a) not in done for a in mine)
        if memory_refused and all(id(a) in done for a in mine if a.side == "vault"):
            upserts[key] = entry
    return upserts
