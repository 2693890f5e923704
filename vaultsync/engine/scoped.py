"""Narrowing a pass to what the quick check saw changed: the entities and files it reads, what it needs of the
others (their names, how many notes share a name) and the standing problems of the files it does not read."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from vaultsync.config import Config
from vaultsync.core.scope import ITEMS, SUMMARY, Context, Scope, narrow
from vaultsync.engine.prepare import (
    missing_places,
)
from vaultsync.model import Problem
from vaultsync.names import fold
from vaultsync.state import snapshot
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.state.snapshot import QuickFindings
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import find_daily_notes


@dataclass
class BaseKeys:
    """What a scoped pass needs of the base besides its own units, shared by its attempts: the memory paths of
    its file units, how many units it holds, and what ``missing_places`` finds for all of them (400k keys at
    200k facts), looked up at most once."""

    store: BaseStore
    files: frozenset[str]
    units: int
    missing: str | None = None

    def missing_places(self, cfg: Config, layout: VaultLayout) -> str:
        if self.missing is None:
            self.missing = missing_places(cfg, layout, self.store.keys())
        return self.missing


@dataclass(frozen=True)
class Narrowed:
    seen: QuickFindings
    scope: Scope
    context: Context
    unread: int  # base units out of scope
    base: BaseKeys


def narrow_pass(
    cfg: Config,
    layout: VaultLayout,
    store: BaseStore,
    seen: QuickFindings,
    more: Iterable[str] = (),
    first: Narrowed | None = None,
) -> Narrowed | None:
    """The scoped pass for what ``seen`` lists, with the entities ``more`` read as well; None: run in full.
    ``first``: the attempt before this one, whose base keys, entity names and entities naming the created,
    renamed or deleted ones (see ``Context``) still hold."""
    entities = snapshot.entities(StateFiles(cfg.state_dir), seen) if first is None else first.context.names
    if entities is None:
        return None
    if not store.stems():
        return None  # a read-only look (--dry-run) at a base from an older version
    base = first.base if first else BaseKeys(store, store.files(), store.count())
    scope = narrow(seen, layout, base.files, entities)
    if scope is None or crowded(scope.created, cfg.life, cfg.vault, layout) or dated(cfg, layout, scope.files):
        return None
    scope = replace(scope, rels=scope.rels | set(more))
    keys = store.keys_of(scope.rels, scope.files)
    context = Context(scope, layout, store, keys, entities, base.files, first.context.naming if first else None)
    return Narrowed(seen, scope, context, base.units - len(context.keys), base)


def standing_unread(cfg: Config, layout: VaultLayout, narrowed: Narrowed) -> list[Problem]:
    """The standing problems of the files a scoped pass does not read: they hold what they held when the last
    settled pass found them. Those of the files it reads, it finds again or not."""
    scope = narrowed.scope
    read_note = scope.reads(layout)
    read = {str(cfg.life / rel / name) for rel in scope.rels for name in (ITEMS, SUMMARY)}
    for mem_path in scope.files:
        root, _, rest = mem_path.partition("/")
        read.add(str((cfg.workspace if root == "workspace" else cfg.life) / rest))
    return [p for p in narrowed.seen.problems if p.path not in read and not read_note(p.path)]


def dated(cfg: Config, layout: VaultLayout, files: Iterable[str]) -> bool:
    """Whether a daily note in scope is kept in a date sub-folder (``Daily/2026/11/``) rather than where the
    config puts it, or a session note or import where an earlier vaultsync put it: a scoped scan reads notes where
    the layout says, so it would take that one for deleted."""
    missing = set()
    for mem_path in files:
        note = layout.file_note(mem_path)
        legacy = layout.legacy_note(mem_path)
        if legacy and (cfg.vault / legacy).exists():
            return True  # kept where an earlier vaultsync put it (and maybe in its new place too): a full scan tells
        if note and layout.daily_of_note(note) and not (cfg.vault / note).exists():
            missing.add(note.rpartition("/")[2])
    return bool(missing) and bool(find_daily_notes(cfg.vault, layout, missing))


def crowded(created: Iterable[str], life: Path, vault: Path, layout: VaultLayout) -> bool:
    """Whether a new entity folder has a neighbour whose name differs from its own only in case, on either side,
    or is not a plain folder: a full scan warns of the one and skips the other, which a scoped pass does not."""
    for rel in created:
        for folder in (life / rel, vault / layout.entity_dir(rel)):
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                return True
            try:
                names = [e.name for e in os.scandir(folder.parent)]
            except OSError:
                return True
            if sum(fold(n) == fold(folder.name) for n in names) > 1:
                return True
    return False
