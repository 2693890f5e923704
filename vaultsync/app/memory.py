"""Writing to the agent's memory from outside a pass: remember, supersede, forget and patch one fact.

These are the agent's side of the sync, done for it by a program (the HTTP API, the MCP server), each through
the one write path (``app/write.py``):

1. the write path takes the run lock, waiting (up to ``wait`` seconds) while a pass or another write holds it, so
   twenty writes at once all land, one after another, and a write never meets a pass half-way; with a
   ``[remote]`` it brings the remote's commits in first;
2. ``items.json`` is read again under the lock and the caller's ETag checked against what is there now;
3. it is edited with ``memory/items_edit.py`` (the file keeps its indentation, key order and escapes; ``git diff``
   shows the one fact), checked against the bytes just read, so an agent writing the file meanwhile is never
   overwritten: the edit is planned again on what it wrote;
4. a pass runs while the lock is still held, carrying the edit into the vault and committing it as the actor
   (the agent, or the API client by the name it gives), and the commit is pushed.

So when a write returns, the fact note exists (or is gone) and the change is committed. A new fact's id follows
the entity's own pattern (``memory/identity.py``) and is never one the entity ever held: the base keeps every
id a pass has seen, and the notes in the vault's ``facts/`` folder count too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import date
from typing import Any

from vaultsync.app.conflicts import open_conflicts
from vaultsync.app.facts import (
    ITEMS,
    FactView,
    check_id,
    entity_dir,
    find_in,
    is_entity,
    locate,
    read_items,
    records,
    resolve,
    view,
)
from vaultsync.config import Config
from vaultsync.errors import FileChanged, InConflict, Invalid, NotFound, Stale, Stopped
from vaultsync.keys import entity_key, fact_key
from vaultsync.memory.items import ItemsDoc
from vaultsync.memory.items_edit import (
    AppendEntry,
    DeleteEntry,
    Edit,
    RemoveFields,
    SetFields,
    apply_edits,
    new_items_file,
)
from vaultsync.memory.new_facts import DATE_FIELDS, BadField, check_date, new_facts, own_spelling
from vaultsync.model import AGENT, Actor, Record, RemoteState, Report
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["WAIT", "Stale", "Stopped", "Written", "forget", "new_records", "patch", "remember", "supersede"]

WAIT = 120.0  # seconds a write waits for the lock before giving up (a first import of a large memory holds it long)
_TRIES = 20  # an agent rewriting items.json this many times while one write is planned: give up, say so


@dataclass
class Written:
    """What a write did: the fact as stored after the pass, the one it replaced or removed, and the pass."""

    fact: FactView | None
    report: Report
    previous: FactView | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact.to_json() if self.fact else None,
            "previous": self.previous.to_json() if self.previous else None,
            "synced": not self.report.stopped,
            "sync": {"exit_code": int(self.report.exit_code), "summary": self.report.summary()},
            "commits": self.report.commits,
            # With a [remote], the write ran the remote round: pushed, or waiting (exit 6) and why.
            "remote": _remote(self.report.remote) if self.report.remote is not None else None,
        }


def _remote(state: RemoteState) -> dict[str, Any]:
    return {"pushed": state.pushed, "waiting_since": state.waiting_since or None, "why": state.why or None}


# -- the four writes ---------------------------------------------------------------------------------------
def remember(
    cfg: Config,
    entity: str,
    fact: str,
    fields: Mapping[str, Any] | None = None,
    *,
    create: bool = False,
    today: date | None = None,
    wait: float = WAIT,
    actor: Actor = AGENT,
) -> Written:
    """Add a fact to ``entity`` (any of its names, ``app/facts.resolve``; its whole folder under ``life/`` for one
    to make); ``fields`` are its other keys (category, timestamp, source, status, or any of the agent's own).
    ``create`` makes the entity when it does not exist."""
    rel = resolve(cfg, entity, new=True)  # a whole folder may name an entity to make
    if create and rel in VaultLayout(cfg.layout).reserved_life_dirs():
        raise Invalid("entity", f"{rel}: its place in the vault holds the workspace files; choose another folder")
    text = _text(fact, "fact")
    extra = _fields(fields or {}, "fields")
    made: dict[str, str] = {}

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]]:
        if raw is None and not is_entity(cfg, rel) and not create:
            raise NotFound(f"no entity {rel}; pass create to make it")
        record = new_records(cfg, rel, doc, [(text, extra, today)])[0]
        made["id"] = record["id"]
        return _apply(doc, [AppendEntry(record)], record), (record["id"],)

    report = _write(cfg, rel, plan, "remember", wait, actor, create=create)
    return Written(_current(cfg, rel, made["id"]), report)


def supersede(
    cfg: Config,
    fact_id: str,
    *,
    by: str | None = None,
    fact: str | None = None,
    fields: Mapping[str, Any] | None = None,
    entity: str | None = None,
    if_match: str | None = None,
    today: date | None = None,
    wait: float = WAIT,
    actor: Actor = AGENT,
) -> Written:
    """Mark a fact superseded: by an existing fact of the same entity (``by``), or by a new one made from
    ``fact`` and ``fields``. ``items.json`` then holds the successor's plain id in ``supersededBy`` (or in
    ``superseded_by``, when that is the key the file already uses)."""
    if (by is None) == (fact is None):
        raise Invalid("by", "give either 'by' (an existing fact's id) or 'fact' (the text of a new one)")
    if by is not None:
        check_id(by, "by")
    text = _text(fact, "fact") if fact is not None else None
    extra = _fields(fields or {}, "fields")
    rel, _, old = locate(cfg, fact_id, entity)
    previous = view(cfg, rel, old)
    _settled(cfg, previous, actor)
    successor: dict[str, str] = {}

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]]:
        index, _record = _still_there(cfg, rel, doc, fact_id, if_match)
        edits: list[Edit] = []
        if by is not None:
            if by == fact_id:
                raise Invalid("by", "a fact cannot supersede itself")
            if find_in(doc, by) is None:
                raise NotFound(f"no fact {by!r} in {rel} to supersede {fact_id!r} with")
            successor["id"] = by
        else:
            new = new_records(cfg, rel, doc, [(str(text), extra, today)])[0]
            successor["id"] = new["id"]
            edits.append(AppendEntry(new))
        key = _superseded_key(doc)
        edits.insert(0, SetFields(index, {"status": "superseded", key: successor["id"]}))
        return _apply(doc, edits, None), (fact_id, successor["id"])

    report = _write(cfg, rel, plan, "supersede", wait, actor)
    return Written(_current(cfg, rel, successor["id"]), report, _current(cfg, rel, fact_id) or previous)


def forget(
    cfg: Config,
    fact_id: str,
    *,
    entity: str | None = None,
    if_match: str | None = None,
    wait: float = WAIT,
    actor: Actor = AGENT,
) -> Written:
    """Take a fact out of ``items.json`` (and so its note out of the vault). Its record is kept in the state
    folder's trash (``trash/<time>/forgotten/<entity>/<id>.json``) and git keeps the note's history."""
    rel, _, old = locate(cfg, fact_id, entity)
    previous = view(cfg, rel, old)
    _settled(cfg, previous, actor)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]]:
        index, record = _still_there(cfg, rel, doc, fact_id, if_match)
        keep = StateFiles(cfg.state_dir).trash(stamp) / "forgotten" / rel / f"{fact_id}.json"
        keep.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(keep, (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode())
        return _apply(doc, [DeleteEntry(index)], None), (fact_id,)

    report = _write(cfg, rel, plan, "forget", wait, actor)
    return Written(None, report, previous)


def patch(
    cfg: Config,
    fact_id: str,
    changes: Mapping[str, Any],
    *,
    entity: str | None = None,
    if_match: str | None = None,
    wait: float = WAIT,
    actor: Actor = AGENT,
) -> Written:
    """Set fields of a fact (a ``None`` value removes the field). The id cannot change, and the text not be
    emptied; every other key, the agent's own included, can."""
    changes = _fields(changes, "changes")
    if not changes:
        raise Invalid("changes", "nothing to change")
    rel, _, record = locate(cfg, fact_id, entity)
    _settled(cfg, view(cfg, rel, record), actor)

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]]:
        index, record = _still_there(cfg, rel, doc, fact_id, if_match)
        held = [r for _, r in records(doc)]
        named = {own_spelling(k, record, held): v for k, v in changes.items()}
        values = {k: v for k, v in named.items() if v is not None}
        gone = tuple(k for k, v in named.items() if v is None and k in record)
        edits: list[Edit] = [SetFields(index, values)] if values else []
        edits += [RemoveFields(index, gone)] if gone else []
        return _apply(doc, edits, None), (fact_id,)

    report = _write(cfg, rel, plan, "patch", wait, actor)
    return Written(_current(cfg, rel, fact_id), report)


def _settled(cfg: Config, fact: FactView, actor: Actor) -> None:
    """Refuse a program's change to a fact whose note has an open conflict copy: the person is choosing between
    two versions of it, and a third written now would either decide for them or be lost when they choose. The
    person's own acts (an inbox decision, a resolution) go on."""
    if actor.kind == "person":
        return
    copies = [c.copy for c in open_conflicts(cfg) if c.note == fact.note]
    if copies:
        raise InConflict(
            f"fact {fact.id!r} of {fact.entity} has an open conflict ({copies[0]}); nothing was written",
            hint="resolve it first: keep one version in the note and delete the copy (or POST /conflicts/resolve), "
            "then write again",
        )


# -- under the lock ----------------------------------------------------------------------------------------
Plan = Callable[[bytes | None, ItemsDoc | None], tuple[bytes, tuple[str, ...]]]  # the new bytes, the fact ids changed


def _write(cfg: Config, rel: str, plan: Plan, kind: str, wait: float, actor: Actor, create: bool = False) -> Report:
    """Edit ``items.json`` through the write path: under the lock, after the remote round, then a pass."""
    path = entity_dir(cfg, rel) / ITEMS

    def apply() -> OwnWrites:
        for _ in range(_TRIES):
            raw, doc = read_items(cfg, rel)
            data, ids = plan(raw, doc)
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            try:
                atomic_write(path, data, raw)
                break
            except FileChanged:
                continue  # the agent wrote the file meanwhile: plan again on what it wrote
        else:
            raise FileChanged(f"{path}: rewritten by another program {_TRIES} times while a write was planned")
        # The one file written is named, so the pass stats it instead of walking the whole memory tree; the facts
        # changed are the actor's, whichever pass commits them (a new items.json: the entity too).
        units = {fact_key(rel, fact_id) for fact_id in ids} | ({entity_key(rel)} if raw is None else set())
        return OwnWrites(True, frozenset({f"life/{rel}/{ITEMS}"}), units=frozenset(units))

    return write(cfg, WriteRequest(kind, actor, apply=apply, wait=wait, recall=False))


def _still_there(cfg: Config, rel: str, doc: ItemsDoc | None, fact_id: str, if_match: str | None) -> tuple[int, Record]:
    found = find_in(doc, fact_id)
    if found is None:
        raise NotFound(f"no fact {fact_id!r} in {rel} (gone since it was looked up)")
    if if_match is not None and not _matches(if_match, view(cfg, rel, found[1]).etag):
        raise Stale(f"fact {fact_id!r} changed since it was read (its ETag is no longer {if_match}); read it again")
    return found


def _matches(header: str, current: str) -> bool:
    """``If-Match``: ``*`` or a list of (possibly weak) entity tags."""
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or current in tags


def _apply(doc: ItemsDoc | None, edits: list[Edit], first: Record | None) -> bytes:
    if doc is None:
        assert first is not None
        return new_items_file([first])
    return apply_edits(doc, edits)


def _current(cfg: Config, rel: str, fact_id: str) -> FactView | None:
    found = find_in(read_items(cfg, rel)[1], fact_id)
    return view(cfg, rel, found[1]) if found else None


# -- new facts and their fields ------------------------------------------------------------------------------
def new_records(
    cfg: Config, rel: str, doc: ItemsDoc | None, wanted: Sequence[tuple[str, Mapping[str, Any], date | None]]
) -> list[Record]:
    """New facts for ``rel`` (text, other fields, the day said; None: today) in its file's own shape, their ids
    minted together past every id the entity holds or held (``memory/new_facts.py``)."""
    held = [r for _, r in records(doc)]
    days = [(text, extra, day or date.today()) for text, extra, day in wanted]
    try:
        return new_facts(slug_of(rel), held, days, _ever(cfg, rel))
    except BadField as exc:
        raise Invalid(exc.field, exc.message) from None


def _ever(cfg: Config, rel: str) -> set[str]:
    """Every id the entity has held as far as the base knows, and the names of its notes in the vault."""
    found: set[str] = set()
    base = StateFiles(cfg.state_dir).base
    if base.exists():
        store = BaseStore(base, read_only=True)
        try:
            found |= store.ids([rel]).get(rel, set())
        finally:
            store.close()
    facts = cfg.vault / VaultLayout(cfg.layout).facts_dir(rel)
    with suppress(OSError):
        found |= {name[:-3] for name in os.listdir(facts) if name.endswith(".md")}
    return found


def _superseded_key(doc: ItemsDoc | None) -> str:
    """The key this file already uses for the successor's id; ``supersededBy`` in a file that uses neither."""
    held = [r for _, r in records(doc)]
    return (
        "superseded_by"
        if any("superseded_by" in r for r in held) and not any("supersededBy" in r for r in held)
        else "supersededBy"
    )


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(field, "expected the fact's text, not empty")
    return value.strip()


def _fields(values: object, field: str) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        raise Invalid(field, "expected an object of field names and values")
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise Invalid(field, "field names must be non-empty text")
        if key == "id":
            raise Invalid("id", "a fact's id cannot be set or changed; it is given when the fact is made")
        if key == "fact":
            value = _text(value, "fact")
        elif key in DATE_FIELDS and value is not None:
            value = _checked_date(value, key)
        elif key == "status" and not (isinstance(value, str) and value) and value is not None:
            raise Invalid("status", "expected text such as active or superseded")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise Invalid(f"{field}.{key}", "not a JSON value") from None
        out[key] = value
    return out


def _checked_date(value: object, field: str) -> str:
    try:
        return check_date(value, field)
    except BadField as exc:
        raise Invalid(exc.field, exc.message) from None
