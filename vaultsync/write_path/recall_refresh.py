"""Keeping the recall index current with the memory tree: what a pass and every query call before searching.

The index (``vaultsync.state.recall``) is a cache of the two trees. It records the stat of every file it read,
the digest of the last stat walk, and the walked files that are no memory a scan reads (``unlisted``), so that
after a small change it re-reads the changed files without listing the tree: at 50k facts, listing it the way a
scan does is most of what a refresh after a small-change pass would cost.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Collection, Mapping

from vaultsync.config import Config
from vaultsync.names import daily_date
from vaultsync.state.files import StateFiles
from vaultsync.state.recall import IndexBroken, RecallIndex, Stat
from vaultsync.state.recall_file import open_index, scratch_index
from vaultsync.state.stat_walk import Entry, MemoryWalk, walk_memory
from vaultsync.system.disk import writable
from vaultsync.vault.layout import VaultLayout

PART = 500  # entities read at a time when the index is built (a tenth as many daily notes)
DAILY_FOLDER = "workspace/memory/"


def refresh(cfg: Config) -> RecallIndex:
    """The index, current with the memory tree; built from scratch when missing, of another version or broken."""
    path = StateFiles(cfg.state_dir).recall
    if not writable(path.parent):
        index = scratch_index()
        _update(cfg, index)
        return index
    index, _ = open_index(path)
    try:
        _update(cfg, index)
    except IndexBroken:
        return rebuild(cfg, index)
    return index


def rebuild(cfg: Config, broken: RecallIndex) -> RecallIndex:
    """A new index in place of one that failed a read or a query.

    A damaged file can look whole where the freshness check reads (its own small table) and fail only in the
    pages a query walks, so every caller that meets ``IndexBroken`` comes here once and asks again; the index is
    only a cache of the memory tree, so nothing is lost by dropping it.
    """
    broken.close()
    path = StateFiles(cfg.state_dir).recall
    path.unlink(missing_ok=True)
    index, _ = open_index(path)
    _update(cfg, index)
    return index


def refresh_after_pass(cfg: Config) -> None:
    """Keep the index current after a pass, and build it when there is none (the first import, or the first
    pass after an upgrade or after someone deleted it), so the first query finds it ready. The build reads the
    memory a part at a time (``PART``), within the memory a pass keeps to. A broken index is built again.
    """
    path = StateFiles(cfg.state_dir).recall
    if not writable(path.parent):
        return
    try:
        refresh(cfg).close()
    except IndexBroken:
        path.unlink(missing_ok=True)


def _update(cfg: Config, index: RecallIndex) -> None:
    """Re-read what changed since the index was last brought up to date.

    Most queries find nothing changed: the stat walk a pass's quick check takes (``walk_memory``, every file a
    scan may read) says so by its digest alone. When the digest moved, the walk's own stats say which files
    changed; the tree is listed the way a scan does only when a file appeared whose place in the memory the
    walk cannot tell (``_listing_needed``). A walk with a file too fresh to trust is not kept, so the next
    query looks again.
    """
    walk = walk_memory(cfg.workspace, cfg.life)
    # Which life/ folders a scan leaves to the workspace's files is config, not any file's stat.
    reserved = ",".join(sorted(VaultLayout(cfg.layout).reserved_life_dirs()))
    token = None if walk.racy else _digest(walk, reserved)
    if token is not None and token == index.note("walk"):
        return
    _read_changed(cfg, index, walk, reserved)
    index.remember("walk", token)


def _digest(walk: MemoryWalk, reserved: str) -> str:
    text = "\n".join(f"{key}\0{entry}" for key, entry in sorted(walk.entries.items()))
    return hashlib.blake2b(f"{reserved}\n{text}".encode(), digest_size=16).hexdigest()


def _read_changed(cfg: Config, index: RecallIndex, walk: MemoryWalk, reserved: str) -> None:
    # The readers load markdown-it and the memory packages: only when something moved.
    from vaultsync.write_path.recall_docs import ENTITY_FILES, entity_of_source, read_docs, stat_of, tree_files

    known = index.file_stats()
    unlisted = index.unlisted()
    walked = {key: _walked(entry) for key, entry in walk.entries.items()}
    new = walked.keys() - known.keys() - unlisted.keys()
    # A file named like memory that a scan skips (a link) may be memory after a change (the link made a file).
    moved = any(
        key in walked and (st is None or walked[key] != st) and key.endswith((".md", *ENTITY_FILES))
        for key, st in unlisted.items()
    )
    stat: Callable[[str], Stat | None]
    if index.note("reserved") != reserved or moved or _listing_needed(cfg, new, known, walked):
        found = tree_files(cfg)
        changed = {p for p, st in found.stats.items() if known.get(p) != st} | (known.keys() - found.stats.keys())
        stat = found.stats.get  # a file the listing did not take is no memory now, whatever is on disk
        index.keep_unlisted({key: st for key, st in walked.items() if key not in found.stats})
        index.remember("reserved", reserved)
    else:
        changed = {p for p, st in known.items() if walked.get(p) != st} | new
        stat = functools.partial(stat_of, cfg)
        if unlisted.keys() - walked.keys():
            index.keep_unlisted({key: st for key, st in unlisted.items() if key in walked})
    if not changed:
        return
    rels = {rel for source in changed if (rel := entity_of_source(source)) is not None}
    files = {source for source in changed if entity_of_source(source) is None}
    # An entity's facts carry its name from summary.md: both of its files are indexed together.
    stats = {s: stat(s) for s in files | {f"life/{rel}/{name}" for rel in rels for name in ENTITY_FILES}}
    ordered = sorted(rel for rel in rels if any(stats[f"life/{rel}/{name}"] for name in ENTITY_FILES))
    present = sorted(f for f in files if stats[f])
    # A part at a time: the index stages and sorts them itself, so a first build holds one part in memory.
    docs = itertools.chain(
        (d for at in range(0, len(ordered), PART) for d in read_docs(cfg, ordered[at : at + PART], [])),
        (d for at in range(0, len(present), PART // 10) for d in read_docs(cfg, [], present[at : at + PART // 10])),
    )
    index.replace(stats, docs, stats)


def _walked(entry: Entry | None) -> Stat | None:
    """A walk entry as the index records a stat: None for a file too fresh to trust, or gone."""
    if entry is None or len(entry) != 4:
        return None
    size, mtime_ns, _, inode = entry
    return (int(size), int(mtime_ns), int(inode))


def _listing_needed(
    cfg: Config, new: Collection[str], known: Mapping[str, Stat], walked: Mapping[str, Stat | None]
) -> bool:
    """Whether files appeared that only a listing of the tree can place.

    Two kinds of new file are placed by their name alone, which covers an agent's everyday writes: a daily
    note (``memory/YYYY-MM-DD.md``, outside a linked folder a scan refuses) and the second file of an entity
    the index holds. Anything else (a new entity folder, a file in a new folder, one a scan may skip) is left to
    ``tree_files``. So is an entity both of whose files went: its folder may have gone or moved with them. The
    files a listing found to be no memory are kept with their stats, and one named like memory changing (a link
    made a file) lists again.
    """
    from vaultsync.write_path.recall_docs import ENTITY_FILES, entity_of_source

    for key in new:
        if key.startswith(DAILY_FOLDER):
            name = key.removeprefix(DAILY_FOLDER)
            if "/" in name or daily_date(name) is None or (cfg.workspace / "memory").is_symlink():
                return True
            continue
        rel = entity_of_source(key)
        if rel is None or not any(f"life/{rel}/{name}" in known for name in ENTITY_FILES):
            return True
    for key in known.keys() - walked.keys():
        rel = entity_of_source(key)
        if rel is not None and not any(f"life/{rel}/{name}" in walked for name in ENTITY_FILES):
            return True
    return False
