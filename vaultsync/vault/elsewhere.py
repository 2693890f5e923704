"""Looking for notes gone from their place, searched only when a pass finds some gone: a note moved where a pass
does not read, or evicted by iCloud, is still the person's, so its unit is held rather than deleted from the
memory. Its own module because it walks the folders a scan never enters (the person's own, hidden placeholders).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from vaultsync.vault.layout import FACTS_DIR, VaultLayout


def find_elsewhere(root: Path, layout: VaultLayout, paths: Collection[str]) -> dict[str, str]:
    """Where each note of ``paths`` (gone from its place) still is, for those that are: note path -> where.

    Looked for, in this order: an iCloud placeholder beside it (``.sarah-007.md.icloud``); a fact note in a
    sub-folder of its ``facts/`` folder (``facts/old/``); the note in a folder of the person's own, outside
    the folders vaultsync manages, under a folder named as its entity (``Archive/sarah/facts/sarah-007.md``),
    or anywhere there for a mirrored file. Hidden folders (Obsidian's ``.trash``) are not looked in: a note
    moved there was deleted.
    """
    found: dict[str, str] = {}
    by_name: dict[str, list[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        icloud = f"{folder}/.{name}.icloud" if folder else f".{name}.icloud"
        if (root / icloud).is_file():
            found[path] = icloud
            continue
        if folder.endswith(f"/{FACTS_DIR}"):
            for dirpath, dirs, files in os.walk(root / folder):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                if name in files and Path(dirpath) != root / folder:
                    found[path] = Path(dirpath, name).relative_to(root).as_posix()
                    break
        if path not in found:
            by_name.setdefault(name, []).append(path)
    if not by_name:
        return found
    managed = {f.split("/", 1)[0] for f in layout.layout.para_folders().values()} | {layout.daily_dir}
    tops = sorted(e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    for top in (t for t in tops if t not in managed):
        for dirpath, dirs, files in os.walk(root / top):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            where = Path(dirpath).relative_to(root).as_posix().split("/")
            for name in set(files) & set(by_name):
                for path in by_name[name]:
                    if path not in found and _owner(path) in (None, *where):
                        found[path] = "/".join([*where, name])
    return found


def _owner(path: str) -> str | None:
    """The entity folder name a note belongs under: a fact note's or an entity note's; None for other notes."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[-2] == FACTS_DIR:
        return parts[-3]
    if len(parts) >= 2 and parts[-1] == f"{parts[-2]}.md":
        return parts[-2]
    return None
