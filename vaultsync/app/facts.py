"""Finding a fact or an entity from what a client names, and the view of a fact every face returns.

Names arrive from outside (an HTTP path, an MCP argument), so each is checked before it touches the disk: an
entity is a folder under ``life/<para>/`` whose every part is a name the vault can hold (no ``..``, no
separators, no control characters, nothing absolute), and a fact id is such a name too. A checked name can
only lead inside ``life/`` or the vault.

A fact is found by its id. Real trees reuse short ids (``f001``) in every entity, so an id alone may name
several facts: then the caller must say which entity (``Ambiguous`` lists them). Where an id lives is looked up
in the base's index of note names first, and only when that finds nothing (a fact the agent added since the
last pass) by reading the ``items.json`` files that hold the id's text.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.errors import Ambiguous, Invalid, NotFound, Unreadable
from vaultsync.keys import split_fact_key
from vaultsync.memory.identity import AmbiguousEntity, UnknownEntity, resolve_entity
from vaultsync.memory.items import ItemsDoc, ItemsError, parse_items
from vaultsync.memory.tree import list_memory
from vaultsync.model import PARA_KEYS, Record, canonical, json_safe
from vaultsync.names import fold, name_problem, slug_problem
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import read_or_none
from vaultsync.vault.layout import FACTS_DIR, VaultLayout

ITEMS = "items.json"


@dataclass(frozen=True)
class FactView:
    """One fact as the faces show it: the record as ``items.json`` holds it, where its note is, and its ETag."""

    id: str
    entity: str
    record: Record
    note: str  # vault-relative path of the fact note
    etag: str

    def to_json(self) -> dict[str, Any]:
        record = json_safe(self.record)
        return {"id": self.id, "entity": self.entity, "record": record, "note": self.note, "etag": self.etag}


def check_entity(entity: object, field: str = "entity") -> str:
    """The entity's folder under ``life/`` (``areas/people/sarah``) as given, once every part is a safe name."""
    if not isinstance(entity, str) or not entity:
        raise Invalid(field, "expected the entity's folder under life/, e.g. areas/people/sarah")
    parts = entity.split("/")
    if parts[0] not in PARA_KEYS:
        raise Invalid(field, f"must start with one of {', '.join(PARA_KEYS)}")
    if len(parts) < 2:
        raise Invalid(field, "names a PARA folder, not an entity inside it")
    for part in parts:
        problem = name_problem(part)
        if problem:
            raise Invalid(field, problem)
    if parts[-1] == FACTS_DIR:
        raise Invalid(field, f"an entity may not be called {FACTS_DIR!r}: its vault folder holds the fact notes")
    return entity


def resolve(cfg: Config, entity: object, field: str = "entity", new: bool = False) -> str:
    """The entity's folder under ``life/`` from whatever a face was given: the folder itself, its end
    (``people/sarah``, ``sarah``), its vault folder or note (``memory/identity.py``). ``new``: a whole folder that
    names no entity yet is returned as it is, for a write that makes the entity. Raises ``Invalid`` for a name
    that cannot be one, ``NotFound`` (saying which names come close) and ``Ambiguous`` (listing the entities)."""
    if not isinstance(entity, str) or not entity.strip():
        raise Invalid(field, "expected an entity: its folder under life/ (areas/people/sarah) or its name (sarah)")
    for part in entity.replace("\\", "/").split("/"):
        problem = name_problem(part) if part else None
        if problem:
            raise Invalid(field, problem)
    whole = entity.split("/")[0] in PARA_KEYS and "/" in entity
    if whole and is_entity(cfg, check_entity(entity, field)):
        return entity  # the common case, answered without listing every entity
    layout = VaultLayout(cfg.layout)
    known = list_memory(cfg.workspace, cfg.life, layout.reserved_life_dirs()).rels
    try:
        return resolve_entity(entity, known, vault_folders(cfg))
    except AmbiguousEntity as exc:
        raise Ambiguous(entity, exc.candidates, str(exc)) from None
    except UnknownEntity as exc:
        if new and whole:
            return _new_entity(check_entity(entity, field), field)
        if new:
            raise Invalid(
                field, f"{exc}; a new entity is named by its whole folder under life/, e.g. areas/people/bo"
            ) from None
        raise NotFound(str(exc)) from None


def _new_entity(rel: str, field: str) -> str:
    """A folder for an entity to make, once its name leaves room for the ids made from it (``slug_problem``):
    checked here, before anything is written, rather than by the next pass that could not hold its facts."""
    problem = slug_problem(rel.rsplit("/", 1)[-1])
    if problem:
        raise Invalid(field, problem)
    return rel


def vault_folders(cfg: Config) -> dict[str, str]:
    """The vault's PARA folder names (``2 Areas``) -> the memory's (``areas``), for naming an entity by either."""
    return {folder: para for para, folder in cfg.layout.para_folders().items()}


def check_id(fact_id: object, field: str = "id") -> str:
    if not isinstance(fact_id, str):
        raise Invalid(field, "expected a fact id (text)")
    problem = name_problem(fact_id)
    if problem:
        raise Invalid(field, problem)
    return fact_id


def entity_dir(cfg: Config, rel: str) -> Path:
    """The entity's folder; a folder reached through a symbolic link is refused, as a pass refuses it."""
    folder = cfg.life / rel
    here = cfg.life
    for part in rel.split("/"):
        here = here / part
        if here.is_symlink():
            raise Invalid("entity", f"{rel}: {part} is a symbolic link, which vaultsync does not follow")
    return folder


def is_entity(cfg: Config, rel: str) -> bool:
    folder = entity_dir(cfg, rel)
    return (folder / ITEMS).is_file() or (folder / "summary.md").is_file()


def read_items(cfg: Config, rel: str) -> tuple[bytes | None, ItemsDoc | None]:
    """``items.json``'s bytes and parse; (None, None) when the entity has none yet."""
    raw = read_or_none(entity_dir(cfg, rel) / ITEMS)
    if raw is None:
        return None, None
    try:
        return raw, parse_items(raw)
    except ItemsError as exc:
        raise Unreadable(f"{cfg.life / rel / ITEMS}: {exc}; fix it by hand before writing to it") from None


def records(doc: ItemsDoc | None) -> list[tuple[int, Record]]:
    """(position, record) of every fact that is an object."""
    return [(e.index, e.value) for e in doc.entries if isinstance(e.value, dict)] if doc else []


def find_in(doc: ItemsDoc | None, fact_id: str) -> tuple[int, Record] | None:
    return next(((i, r) for i, r in records(doc) if r.get("id") == fact_id), None)


def etag(record: Record, note: bytes | None) -> str:
    """Changes whenever the record or its note does: an edit typed into the note before a pass counts too."""
    digest = hashlib.sha1(canonical(record).encode())
    digest.update(b"\0" + (note or b""))
    return f'"{digest.hexdigest()[:20]}"'


def view(cfg: Config, rel: str, record: Record) -> FactView:
    fact_id = str(record.get("id", ""))
    note = VaultLayout(cfg.layout).fact_note(rel, fact_id)
    return FactView(fact_id, rel, record, note, etag(record, read_or_none(cfg.vault / note)))


def locate(cfg: Config, fact_id: str, entity: str | None = None) -> tuple[str, int, Record]:
    """(entity, position, record) of the fact with ``fact_id``; raises NotFound or Ambiguous."""
    check_id(fact_id)
    if entity is not None:
        rel = resolve(cfg, entity)
        found = find_in(read_items(cfg, rel)[1], fact_id)
        if found is None:
            raise NotFound(f"no fact {fact_id!r} in {rel}")
        return (rel, *found)
    hits: dict[str, tuple[int, Record]] = {}
    for rel in _indexed(cfg, fact_id) or _holding(cfg, fact_id):
        try:
            found = find_in(read_items(cfg, rel)[1], fact_id)
        except (Unreadable, Invalid):
            continue
        if found is not None:
            hits[rel] = found
    if not hits:
        raise NotFound(f"no fact {fact_id!r}")
    if len(hits) > 1:
        raise Ambiguous(fact_id, sorted(hits))
    rel, (index, record) = next(iter(hits.items()))
    return rel, index, record


def _indexed(cfg: Config, fact_id: str) -> list[str]:
    """The entities whose fact notes the last pass named ``fact_id``, from the base's index."""
    path = StateFiles(cfg.state_dir).base
    if not path.exists():
        return []
    store = BaseStore(path, read_only=True)
    try:
        return sorted({split_fact_key(key)[0] for key in store.fact_keys_named(fold(fact_id))})
    except sqlite3.Error:  # an older or damaged base: fall back to reading the files
        return []
    finally:
        store.close()


def _holding(cfg: Config, fact_id: str) -> list[str]:
    """Entities whose ``items.json`` holds the id's JSON text (as written with or without ASCII escapes)."""
    needles = {json.dumps(fact_id).encode(), json.dumps(fact_id, ensure_ascii=False).encode()}
    found = []
    for folder, dirs, files in os.walk(cfg.life):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if ITEMS in files:
            raw = read_or_none(Path(folder) / ITEMS) or b""
            if any(needle in raw for needle in needles):
                rel = Path(folder).relative_to(cfg.life).as_posix()
                if rel.split("/", 1)[0] in PARA_KEYS and "/" in rel:
                    found.append(rel)
    return found
