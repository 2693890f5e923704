"""What the last settled pass saw, so that an hourly pass with nothing to do costs about what git pays to look
at the vault, not a read of every note.

A pass is settled when it ended with both sides agreeing and nothing left for later: no error or warning, no
write abandoned, no folder moved. It then records, in the state folder, ``snapshot.json``: every memory file's
stat (size, mtime, ctime, inode) taken before the scan read it (``stat_walk.py``), or the sha1 of what the pass read or
wrote there when the file was too fresh for its stat to be trusted; the notes the next quick check must hash
itself (``suspects``); the conflict copies still open; the standing problems to say again. Beside it, the
snapshot index (``git/index.py``) holds the notes, and ``snapshot-entities.json`` every entity's names.

Anything doubtful (no snapshot, another version or config, a replaced base) means a full pass, which is always
correct; the snapshot only ever saves work, it never decides a merge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vaultsync import __version__
from vaultsync.config import Config
from vaultsync.model import Problem, Severity
from vaultsync.state.files import StateFiles
from vaultsync.state.stat_walk import MemoryWalk
from vaultsync.system.fs import atomic_write, digest

FORMAT = 2  # bump when what a snapshot means changes


def key_of(cfg: Config) -> str:
    """What a snapshot is only valid for: this code and this configuration (kept as text: hashing it would load
    OpenSSL before ``git status`` starts). Where the config file was named from is left out: ``serve`` given a
    relative ``--config`` and cron given the absolute path read the same settings, and must share the snapshot
    rather than make each other's next pass a full one."""
    return f"{FORMAT}|{__version__}|{replace(cfg, source=None)!r}"


def file_stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def load(cfg: Config, files: StateFiles) -> dict[str, Any] | None:
    """The snapshot as recorded, when it belongs to this code, this config and this base; None otherwise."""
    try:
        saved = json.loads(files.snapshot.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("key") != key_of(cfg) or saved.get("base") != file_stat(files.base):
        return None
    memory, suspects = saved.get("memory"), saved.get("suspects")
    if not isinstance(memory, dict) or not isinstance(suspects, dict) or not _problems_ok(saved):
        return None
    return saved


def save(cfg: Config, files: StateFiles, snapshot: dict[str, Any]) -> None:
    atomic_write(files.snapshot, json.dumps({"key": key_of(cfg), **snapshot, "base": file_stat(files.base)}).encode())


def forget(files: StateFiles) -> None:
    """Drop the snapshot: the next pass runs in full."""
    files.snapshot.unlink(missing_ok=True)


@dataclass
class QuickFindings:
    """What the quick check found changed since the snapshot, in the snapshot's own terms."""

    saved: dict[str, Any]  # the snapshot as recorded
    memory: set[str]  # walk keys added, removed or changed
    vault: set[str]  # vault paths in synced places with another content, deleted or new
    odd: set[str] = field(default_factory=set)  # ignored folders inside synced places: only a full pass knows

    @property
    def nothing(self) -> bool:
        return not (self.memory or self.vault or self.odd)

    @property
    def conflicts(self) -> list[str]:
        return list(self.saved.get("conflicts", []))

    @property
    def problems(self) -> list[Problem]:
        """The standing problems the last settled pass found, each in a file unchanged unless ``memory`` or
        ``vault`` says otherwise."""
        saved = self.saved["problems"]
        return [Problem(path, message, Severity(severity), standing=True) for path, message, severity in saved]


def _problems_ok(saved: dict[str, Any]) -> bool:
    problems = saved.get("problems")
    return isinstance(problems, list) and all(
        isinstance(p, list) and len(p) == 3 and all(isinstance(x, str) for x in p) and p[2] in set(Severity)
        for p in problems
    )


def changed_memory(saved: dict[str, Any], walk: MemoryWalk, cfg: Config) -> set[str]:
    """The walk keys whose file is new, gone or changed since the snapshot ``saved`` (its ``memory`` part).
    For a walk of named files only (``walk_named``), only those are compared: the rest of it is ``saved``."""
    if walk.named is not None:
        saved = {key: saved[key] for key in walk.named if key in saved}
        entries = {key: walk.entries[key] for key in walk.named if key in walk.entries}
    else:
        entries = walk.entries
    changed = saved.keys() ^ entries.keys()
    for key, entry in saved.items():
        if key in changed:
            continue
        if isinstance(entry, list) and entry[:1] == ["sha1"]:
            root, _, rel = key.partition("/")
            try:
                data = ((cfg.workspace if root == "workspace" else cfg.life) / rel).read_bytes()
            except OSError:
                data = None
            if data is None or digest(data) != entry[1]:
                changed.add(key)
        elif entry is None or entry != entries[key]:
            changed.add(key)
    return changed


def entities(files: StateFiles, seen: QuickFindings) -> dict[str, Any] | None:
    """The entity names recorded with the snapshot ``seen`` came from; None when they do not belong to it."""
    found = saved_entities(files)
    if found is None or found[0] != seen.saved.get("token"):
        return None
    return found[1]


def saved_entities(files: StateFiles) -> tuple[str, dict[str, Any]] | None:
    """(token, entity rel -> [name, aliases]) as the last settled pass recorded them, whichever snapshot."""
    try:
        saved = json.loads(files.entities.read_bytes())
    except (OSError, ValueError):
        return None
    found = saved.get("entities") if isinstance(saved, dict) else None
    return (str(saved.get("token")), found) if isinstance(found, dict) else None


def save_entities(files: StateFiles, token: str, names: dict[str, Any]) -> None:
    atomic_write(files.entities, json.dumps({"token": token, "entities": names}).encode())
