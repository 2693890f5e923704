"""Bringing the work tree and the index along after HEAD moved to a merge with the remote.

Only paths that differ between the old and the new commit are touched, and each only where the file on disk
still holds what the old commit had (compare-and-swap, as every write of a pass): an edit made on this
machine since the last commit is never overwritten. Such a path is returned instead, with the incoming
version, for the caller to keep beside it. Running it again after a kill finishes the job: a file already
holding the new version is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.errors import FileChanged
from vaultsync.git.index import blob_id
from vaultsync.git.run import Git, batch_objects, nul_list
from vaultsync.system.fs import atomic_write, read_or_none, remove_checked, settle

PLAIN = ("100644", "100755")
Entry = tuple[str, str]


@dataclass
class Followed:
    paths: list[str] = field(default_factory=list)  # every path that differs between the two commits
    written: list[str] = field(default_factory=list)  # written or deleted on disk
    kept: dict[str, bytes] = field(default_factory=dict)  # changed here meanwhile: path -> the incoming version
    bases: dict[str, bytes] = field(default_factory=dict)  # of those, the old commit's version, when a plain file


def differences(git: Git, old: str, new: str) -> dict[str, tuple[Entry | None, Entry | None]]:
    """path -> (entry in ``old``, entry in ``new``) for each path that differs, renames as delete and add."""
    out = git.bytes("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new)
    records = out.split(b"\0")
    found: dict[str, tuple[Entry | None, Entry | None]] = {}
    for header, path in zip(records[0::2], records[1::2], strict=False):
        if not header.startswith(b":"):
            continue
        old_mode, new_mode, old_id, new_id, _ = header[1:].decode().split(" ")
        before = None if old_mode == "000000" else (old_mode, old_id)
        after = None if new_mode == "000000" else (new_mode, new_id)
        found[path.decode("utf-8", "surrogateescape")] = (before, after)
    return found


def follow(git: Git, old: str, new: str, keep: Collection[Path]) -> Followed:
    """Make the work tree and index show ``new`` where they showed ``old``; ``keep``: folders never removed
    when a deletion empties them (the vault's top folders, which a pass expects to exist)."""
    changed = differences(git, old, new)
    result = Followed(paths=sorted(changed))
    wanted = sorted({entry[1] for pair in changed.values() for entry in pair if entry and entry[0] in PLAIN})
    query = "".join(f"{oid}\n" for oid in wanted).encode()
    found = batch_objects(git.bytes("cat-file", "--batch", stdin=query)) if wanted else []
    content = {oid: got[2] for oid, got in zip(wanted, found, strict=True) if got is not None}
    info: list[str] = []
    for path in result.paths:
        before, after = changed[path]
        target = git.root / path
        try:
            disk = None if target.is_symlink() else read_or_none(target)
        except OSError:
            disk = b""  # a folder where a file was: not a state either commit describes
        incoming = content.get(after[1]) if after else None
        if any(entry and entry[0] not in PLAIN for entry in (before, after)):
            info.append(_index_line(path, after))  # a link or submodule: recorded, not written
            continue
        on_disk = None if disk is None else blob_id(disk)
        if on_disk == (after[1] if after else None):
            result.written.append(path)  # already as ``new`` has it (a resumed update)
            continue
        if on_disk != (before[1] if before else None):
            if incoming is not None:
                result.kept[path] = incoming
                if before is not None and before[1] in content:
                    result.bases[path] = content[before[1]]
            info.append(_index_line(path, after))
            continue
        try:
            if after is None:
                replaced = remove_checked(target, disk, keep=[git.root, *keep])
                if replaced:
                    settle(replaced)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, incoming or b"", disk)
                os.chmod(target, 0o755 if after[0] == "100755" else 0o644)
        except (FileChanged, OSError):
            if incoming is not None:
                result.kept[path] = incoming
            info.append(_index_line(path, after))
            continue
        result.written.append(path)
    _restage(git, result.written, info)
    return result


def _index_line(path: str, entry: Entry | None) -> str:
    return f"{entry[0]} {entry[1]}\t{path}\0" if entry else f"0 {'0' * 40}\t{path}\0"


def _restage(git: Git, written: list[str], info: list[str]) -> None:
    """The real index: paths now on disk as ``new`` has them are hashed from disk (so ``git status`` sees them
    clean); the rest get ``new``'s entry, so the edit made here shows as a change against the merge.

    A failure (an index another git holds past the wait) is raised: an index still holding the old commit
    would let a ``git commit -a`` undo the merge, so the caller keeps its journal and the next pass retries.
    """
    if written:
        git.text("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_list(written))
    if info:
        git.text("update-index", "-z", "--index-info", stdin="".join(info).encode())
