"""The open conflicts, each copy beside its note, and resolving one for the person from a plugin.

A conflict leaves memory's version in the note and the person's in a copy beside it
(``<note>.vaultsync-conflict-<stamp>.md``, docs/two-way.md). Resolving by hand is: make the note the version you
want, delete the copy, run a pass. These functions do exactly that and nothing more, so the pass that follows
sees an ordinary edit by the person and commits it (and the copy's deletion, "conflict resolved") as theirs:

* ``keep="agent"``: the note already holds memory's version; only the copy goes;
* ``keep="mine"``: the note takes the copy's bytes, then the copy goes; the pass carries the note to memory.

Both go through the one write path (``app/write.py``: the lock, the remote round, the pass, committed as the
person), and each file is written only if it still holds what was read: a note saved
meanwhile is not overwritten (``FileChanged``; the caller tries again after reading the conflict anew).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from vaultsync.config import Config
from vaultsync.errors import FileChanged, Invalid, NotFound
from vaultsync.model import PERSON, Report
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write, remove_checked, settle
from vaultsync.vault.layout import CONFLICT_MARK
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["KEEP", "FileChanged", "OpenConflict", "Resolved", "note_of", "open_conflicts", "resolve"]

KEEP = ("mine", "agent")
WAIT = 120.0  # seconds to wait for a running pass, as a memory write does


@dataclass(frozen=True)
class OpenConflict:
    copy: str  # vault-relative path of the copy holding the person's version
    note: str  # vault-relative path of the note, holding memory's version
    unit: str  # what clashed: an entity, a fact or a file, as the pass names it
    detail: str  # the field that clashed, or "both sides changed the same lines"
    note_exists: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "copy": self.copy,
            "note": self.note,
            "unit": self.unit,
            "detail": self.detail,
            "note_exists": self.note_exists,
        }


@dataclass
class Resolved:
    conflict: OpenConflict
    kept: str
    report: Report

    def to_json(self) -> dict[str, Any]:
        return {
            "resolved": self.conflict.to_json(),
            "kept": self.kept,
            "synced": not self.report.stopped,
            "sync": {"exit_code": int(self.report.exit_code), "summary": self.report.summary()},
            "commits": self.report.commits,
            "open_conflicts": sorted(self.report.open_conflicts),
        }


def note_of(copy: str) -> str:
    """``facts/x.vaultsync-conflict-20261202-184354.md`` -> ``facts/x.md`` (the suffix the copy kept)."""
    head, _, tail = copy.rpartition(CONFLICT_MARK)
    suffix = tail[tail.rfind(".") :] if "." in tail else ""
    return head + suffix


def open_conflicts(cfg: Config) -> list[OpenConflict]:
    """The conflict copies the last pass recorded that are still in the vault, in path order.

    The record is the base's, as ``status`` reports it: cheap at any size (no walk of the vault)."""
    base = StateFiles(cfg.state_dir).base
    if not base.exists():
        return []
    store = BaseStore(base, read_only=True)
    try:
        known = store.conflicts()
    finally:
        store.close()
    found = []
    for copy, (unit, detail) in sorted(known.items()):
        if (cfg.vault / copy).is_file():
            note = note_of(copy)
            found.append(OpenConflict(copy, note, unit, detail, (cfg.vault / note).is_file()))
    return found


def resolve(cfg: Config, copy: str, keep: Literal["mine", "agent"] | str, wait: float = WAIT) -> Resolved:
    """Keep the person's version (``mine``) or memory's (``agent``) of one open conflict, then run a pass."""
    if keep not in KEEP:
        raise Invalid("keep", "expected 'mine' (the copy's version) or 'agent' (the note's version)")
    conflict = next((c for c in open_conflicts(cfg) if c.copy == copy), None)
    if conflict is None:
        raise NotFound(f"no open conflict copy {copy!r}; GET /conflicts lists them")

    def apply() -> OwnWrites:
        copy_path, note_path = cfg.vault / conflict.copy, cfg.vault / conflict.note
        try:
            mine = copy_path.read_bytes()
        except FileNotFoundError:
            raise NotFound(f"{conflict.copy}: deleted meanwhile; the conflict is resolved already") from None
        if keep == "mine":
            try:
                current: bytes | None = note_path.read_bytes()
            except FileNotFoundError:
                current = None
            atomic_write(note_path, mine, current)
        replaced = remove_checked(copy_path, mine)
        if replaced:
            settle(replaced)
        return OwnWrites(True)

    # The person's decision: the pass that follows commits the note and the copy's deletion as theirs.
    report = write(cfg, WriteRequest("resolve", PERSON, apply=apply, wait=wait))
    return Resolved(conflict, keep, report)
