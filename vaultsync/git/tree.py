"""git tree objects edited along a few paths, so that a small commit needs no index.

An index holds an entry for every note; reading and rewriting one costs what the vault's size costs (6 MB at
50k notes, 25 MB at 200k), and a commit built with one does so twice. A commit of three notes only changes
the trees on their folders' paths: those are read, edited and written here, a few dozen entries each.

Trees are git's binary format: entries ``<mode> <name>\\0<raw id>``, ordered by name with folders compared as
if their name ended in ``/``. Only SHA-1 repositories are handled (20-byte ids).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

Entries = dict[bytes, tuple[bytes, bytes]]  # name -> (mode, raw object id)
TREE = b"40000"
FILE = b"100644"
KINDS = {TREE: b"tree", b"160000": b"commit"}  # every other mode names a blob (a file, an executable, a link)
ID_BYTES = 20


class NotEditable(ValueError):
    """The change needs something this editor does not do (a file where a folder is, a link)."""


def parse(body: bytes) -> Entries:
    entries: Entries = {}
    i = 0
    while i < len(body):
        space = body.index(b" ", i)
        nul = body.index(b"\0", space)
        entries[body[space + 1 : nul]] = (body[i:space], body[nul + 1 : nul + 1 + ID_BYTES])
        i = nul + 1 + ID_BYTES
    return entries


def encode(entries: Entries) -> bytes:
    def order(name: bytes) -> bytes:
        return name + b"/" if entries[name][0] == TREE else name

    parts = []
    for name in sorted(entries, key=order):
        mode, oid = entries[name]
        parts.append(mode + b" " + name + b"\0" + oid)
    return b"".join(parts)


def object_id(body: bytes) -> bytes:
    """The raw id git gives ``body`` as a tree."""
    return hashlib.sha1(b"tree %d\0" % len(body) + body).digest()


def folders(paths: Iterable[str]) -> list[str]:
    """Every folder on the way to ``paths`` ("" is the root), deepest first."""
    found = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        found.update("/".join(parts[: n + 1]) for n in range(len(parts)))
    return sorted(found, key=lambda f: (-(f.count("/") + 1) if f else 0, f))


def edit(trees: Mapping[str, Entries], files: Mapping[str, bytes | None]) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The new root tree's id and every new tree (id, body), children before their parents.

    ``trees``: the entries of each folder in ``folders(files)`` as the parent commit has it (absent: no such
    folder yet). ``files``: path -> raw blob id of a plain file, or None to remove it. A folder left empty goes.
    """
    new = {folder: dict(trees.get(folder, {})) for folder in folders(files)}
    for path, blob in files.items():
        folder, _, name = path.rpartition("/")
        _check(new[folder], name.encode(), FILE)
        if blob is None:
            new[folder].pop(name.encode(), None)
        else:
            new[folder][name.encode()] = (FILE, blob)
    written: list[tuple[bytes, bytes]] = []
    for folder in folders(files):
        entries = new[folder]
        if not folder:
            continue
        parent, _, name = folder.rpartition("/")
        _check(new[parent], name.encode(), TREE)
        if entries:
            body = encode(entries)
            oid = object_id(body)
            written.append((oid, body))
            new[parent][name.encode()] = (TREE, oid)
        else:
            new[parent].pop(name.encode(), None)
    body = encode(new[""])
    root = object_id(body)
    written.append((root, body))
    return root, written


def _check(entries: Entries, name: bytes, mode: bytes) -> None:
    held = entries.get(name)
    if held is not None and (held[0] == TREE) != (mode == TREE):
        raise NotEditable(f"{name!r} changes between a file and a folder")
    if held is not None and held[0] not in (TREE, FILE):
        raise NotEditable(f"{name!r} is a {held[0]!r} entry (a link, an executable or a submodule)")
