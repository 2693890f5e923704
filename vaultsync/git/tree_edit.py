"""The tree of a small commit, built by editing HEAD's trees along its paths instead of filling an index.

``tree.py`` reads, edits and encodes tree objects as values; this module is the git round trips around that:
the files' blobs stored, HEAD's trees on their folders' paths read, the edited trees stored and checked against
git's own ids. Whenever git's view and the edit could differ, it answers None and the commit falls back to
the private index (``repo.py``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vaultsync.git import tree
from vaultsync.git.run import Git, GitFailed, batch_objects

TREE_EDIT_MAX = 200  # commits of up to this many paths edit HEAD's trees instead of using the private index
TREES_DIR = "vaultsync-trees"  # tree objects on their way into git (see ``_store_trees``)


def plain_files(git: Git, wanted: list[str]) -> dict[str, bytes | None] | None:
    """Path -> blob id (stored now) of each path, None for one that is gone; None when one is not a plain
    file (a link, an executable, a folder) or cannot be hashed: the private index handles those."""
    files: dict[str, bytes | None] = {}
    present = []
    for path in wanted:
        try:
            st = os.lstat(git.root / path)
        except FileNotFoundError:
            files[path] = None
            continue
        except OSError:
            return None
        if "\n" in path or not stat.S_ISREG(st.st_mode) or st.st_mode & 0o111:
            return None
        present.append(path)
    if present:
        try:
            ids = git.text("hash-object", "-w", "--stdin-paths", stdin="".join(f"{p}\n" for p in present).encode())
        except GitFailed:
            return None  # gone or changing meanwhile: update-index copes with that
        found = ids.split()
        if len(found) != len(present):
            return None
        files.update(zip(present, map(bytes.fromhex, found), strict=True))
    return files


def edited_tree(git: Git, head: str, files: dict[str, bytes | None]) -> tuple[str, str] | None:
    """(new tree, ``head``'s tree) with ``files`` changed, built without an index; None when the private
    index must build it (not a SHA-1 repository, a file becoming a folder, a name git would quote)."""
    if len(head) != 2 * tree.ID_BYTES:
        return None
    wanted = ["", *[folder for folder in tree.folders(files) if folder]]
    query = "".join(f"{head}:{folder}\n" if folder else f"{head}^{{tree}}\n" for folder in wanted)
    found = batch_objects(git.bytes("cat-file", "--batch", stdin=query.encode()))
    if len(found) != len(wanted) or found[0] is None:
        return None
    trees: dict[str, tree.Entries] = {}
    for folder, got in zip(wanted, found, strict=True):
        if got is not None:
            _, kind, body = got
            if kind != b"tree":
                return None
            trees[folder] = tree.parse(body)
    old = found[0][0].decode()
    if tree.object_id(tree.encode(trees[""])).hex() != old:
        return None  # a tree ``tree.encode`` would not write the same way: let git do it
    try:
        root, written = tree.edit(trees, files)
    except tree.NotEditable:
        return None
    if root.hex() == old:
        return old, old
    if _store_trees(git, written) != [oid.hex() for oid, _ in written]:
        return None  # git disagrees with the trees computed here: let the index build it
    return root.hex(), old


def _store_trees(git: Git, written: list[tuple[bytes, bytes]]) -> list[str]:
    """Store the trees ``written`` (id, body); the ids git gave them, or [] when it refused.

    ``hash-object -t tree`` checks a tree's format, where ``mktree`` would also look up the type of every
    entry's object: a lookup per entry, hundreds for one kind folder of a large memory (the small-change
    benchmark of benchmarks/run.py measures it). The bodies go through files named by their ids, so two writers
    of one name write the same bytes.
    """
    folder = git.git_dir / TREES_DIR
    paths: list[Path] = []
    try:
        folder.mkdir(exist_ok=True)
        for oid, body in written:
            paths.append(folder / oid.hex())
            paths[-1].write_bytes(body)
        listing = "".join(f"{path}\n" for path in paths).encode()
        return git.text("hash-object", "-w", "-t", "tree", "--no-filters", "--stdin-paths", stdin=listing).split()
    except (OSError, GitFailed):
        return []
    finally:
        for path in paths:
            path.unlink(missing_ok=True)
