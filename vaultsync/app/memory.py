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

Each is safe to repeat (a program retries after a timeout): remembering a sentence the entity holds as an active
fact (``memory/same_fact.py``) answers with that fact; superseding a fact superseded already answers with its
successor when the successor is the one asked for, and is refused (``Superseded``) when it is another; forgetting a
fact that is gone answers so when the fact was once held (``app/forgotten.py``). Such an answer says
``already`` and writes nothing, so no pass runs and git gets no commit. The check is made under the lock, so two
copies of one call sent at once change the memory once too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from vaultsync.app.conflicts import open_conflicts
from vaultsync.app.fact_fields import checked_fields, fact_text, new_records, superseded_key
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
from vaultsync.app.forgotten import once_held
from vaultsync.config import Config
from vaultsync.errors import FileChanged, InConflict, Invalid, NotFound, Stale, Stopped, Superseded
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
from vaultsync.memory.new_facts import own_spelling
from vaultsync.memory.same_fact import active_saying, sentence_key, successor_of
from vaultsync.model import AGENT, Actor, Record, RemoteState, Report
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write
from vaultsync.vault.layout import VaultLayout
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["WAIT", "Stale", "Stopped", "Written", "forget", "patch", "remember", "supersede"]

WAIT = 120.0  # seconds a write waits for the lock before giving up (a first import of a large memory holds it long)
_TRIES = 20  # an agent rewriting items.json this many times while one write is planned: give up, say so


@dataclass
class Written:
    """What a write did: the fact as stored after the pass, the one it replaced or removed, and the pass;
    ``already``: the memory held the change before the call, and nothing was written."""

    fact: FactView | None
    report: Report
    previous: FactView | None = None
    already: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact.to_json() if self.fact else None,
            "previous": self.previous.to_json() if self.previous else None,
            "synced": not self.report.stopped,
            "sync": {"exit_code": int(self.report.exit_code), "summary": self.report.summary()},
            "commits": self.report.commits,
            # With a [remote], the write ran the remote round: pushed, or waiting (exit 6) and why.
            "remote": _remote(self.report.remote) if self.report.remote is not None else None,
            "already": self.already,
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
    text = fact_text(fact, "fact")
    extra = checked_fields(fields or {}, "fields")
    made: dict[str, str] = {}

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]] | None:
        if raw is None and not is_entity(cfg, rel) and not create:
            raise NotFound(f"no entity {rel}; pass create to make it")
        held = active_saying((r for _, r in records(doc)), text)
        record = held or new_records(cfg, rel, doc, [(text, extra, today)])[0]
        made["id"] = record["id"]
        return None if held else (_apply(doc, [AppendEntry(record)], record), (record["id"],))

    report, wrote = _write(cfg, rel, plan, "remember", wait, actor, create=create)
    return Written(_current(cfg, rel, made["id"]), report, already=not wrote)


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
    text = fact_text(fact, "fact") if fact is not None else None
    extra = checked_fields(fields or {}, "fields")
    rel, _, old = locate(cfg, fact_id, entity)
    previous = view(cfg, rel, old)
    _settled(cfg, previous, actor)
    successor: dict[str, str] = {}

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]] | None:
        index, record = _still_there(rel, doc, fact_id)
        done = successor_of(record)
        if done is not None:  # superseded already: the same change repeated, or another one refused
            successor["id"] = _same_successor(rel, doc, fact_id, done, by, text)
            return None
        _check_version(cfg, rel, record, fact_id, if_match)
        edits: list[Edit] = []
        if by is not None:
            if by == fact_id:
                raise Invalid("by", "a fact cannot supersede itself")
            if find_in(doc, by) is None:
                raise NotFound(f"no fact {by!r} in {rel} to supersede {fact_id!r} with")
            successor["id"] = by
        elif held := active_saying((r for _, r in records(doc)), str(text), besides=fact_id):
            successor["id"] = held["id"]  # the entity says it already: that fact is the successor, not a copy
        else:
            new = new_records(cfg, rel, doc, [(str(text), extra, today)])[0]
            successor["id"] = new["id"]
            edits.append(AppendEntry(new))
        key = superseded_key(doc)
        edits.insert(0, SetFields(index, {"status": "superseded", key: successor["id"]}))
        return _apply(doc, edits, None), (fact_id, successor["id"])

    report, wrote = _write(cfg, rel, plan, "supersede", wait, actor)
    now = _current(cfg, rel, fact_id) or previous
    return Written(_current(cfg, rel, successor["id"]), report, now, already=not wrote)


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
    folder's trash (``trash/<time>/forgotten/<entity>/<id>.json``) and git keeps the note's history. A fact
    gone already (``app/forgotten.py``: once held) is answered ``already``; one never held raises NotFound."""
    try:
        rel, _, old = locate(cfg, fact_id, entity)
    except NotFound:
        if once_held(cfg, fact_id, entity):
            return Written(None, Report(), already=True)
        raise
    previous = view(cfg, rel, old)
    _settled(cfg, previous, actor)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]] | None:
        found = find_in(doc, fact_id)
        if found is None:
            return None  # forgotten since it was looked up: a copy of this call, sent at once, came first
        index, record = found
        _check_version(cfg, rel, record, fact_id, if_match)
        keep = StateFiles(cfg.state_dir).trash(stamp) / "forgotten" / rel / f"{fact_id}.json"
        keep.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(keep, (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode())
        return _apply(doc, [DeleteEntry(index)], None), (fact_id,)

    report, wrote = _write(cfg, rel, plan, "forget", wait, actor)
    return Written(None, report, previous, already=not wrote)


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
    changes = checked_fields(changes, "changes")
    if not changes:
        raise Invalid("changes", "nothing to change")
    rel, _, record = locate(cfg, fact_id, entity)
    _settled(cfg, view(cfg, rel, record), actor)

    def plan(raw: bytes | None, doc: ItemsDoc | None) -> tuple[bytes, tuple[str, ...]] | None:
        index, record = _still_there(rel, doc, fact_id)
        _check_version(cfg, rel, record, fact_id, if_match)
        held = [r for _, r in records(doc)]
        named = {own_spelling(k, record, held): v for k, v in changes.items()}
        values = {k: v for k, v in named.items() if v is not None}
        gone = tuple(k for k, v in named.items() if v is None and k in record)
        edits: list[Edit] = [SetFields(index, values)] if values else []
        edits += [RemoveFields(index, gone)] if gone else []
        return _apply(doc, edits, None), (fact_id,)

    report, _ = _write(cfg, rel, plan, "patch", wait, actor)
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
# The file's new bytes and the fact ids it changed; None: nothing to write.
Plan = Callable[[bytes | None, ItemsDoc | None], tuple[bytes, tuple[str, ...]] | None]


def _write(
    cfg: Config, rel: str, plan: Plan, kind: str, wait: float, actor: Actor, create: bool = False
) -> tuple[Report, bool]:
    """Edit ``items.json`` through the write path: under the lock, after the remote round, then a pass. The
    report, and whether anything was written (a plan finding the change made already writes nothing, and no
    pass runs)."""
    path = entity_dir(cfg, rel) / ITEMS
    wrote: list[bool] = []

    def apply() -> OwnWrites:
        for _ in range(_TRIES):
            raw, doc = read_items(cfg, rel)
            planned = plan(raw, doc)
            if planned is None:
                return OwnWrites(False)
            data, ids = planned
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            try:
                atomic_write(path, data, raw)
                break
            except FileChanged:
                continue  # the agent wrote the file meanwhile: plan again on what it wrote
        else:
            raise FileChanged(f"{path}: rewritten by another program {_TRIES} times while a write was planned")
        wrote.append(True)
        # The one file written is named, so the pass stats it instead of walking the whole memory tree; the facts
        # changed are the actor's, whichever pass commits them (a new items.json: the entity too).
        units = {fact_key(rel, fact_id) for fact_id in ids} | ({entity_key(rel)} if raw is None else set())
        return OwnWrites(True, frozenset({f"life/{rel}/{ITEMS}"}), units=frozenset(units))

    report = write(cfg, WriteRequest(kind, actor, apply=apply, wait=wait, recall=False))
    return report, bool(wrote)


def _still_there(rel: str, doc: ItemsDoc | None, fact_id: str) -> tuple[int, Record]:
    found = find_in(doc, fact_id)
    if found is None:
        raise NotFound(f"no fact {fact_id!r} in {rel} (gone since it was looked up)")
    return found


def _check_version(cfg: Config, rel: str, record: Record, fact_id: str, if_match: str | None) -> None:
    if if_match is not None and not _matches(if_match, view(cfg, rel, record).etag):
        raise Stale(f"fact {fact_id!r} changed since it was read (its ETag is no longer {if_match}); read it again")


def _same_successor(rel: str, doc: ItemsDoc | None, fact_id: str, done: str, by: str | None, text: str | None) -> str:
    """``done``, the successor a superseded fact names, when it is the one asked for (the id given as ``by``, or
    a fact saying ``text``); otherwise the call asks for a second successor, which is refused."""
    if by is not None:
        same = by == done
    else:
        found = find_in(doc, done)
        said = found[1].get("fact") if found else None
        same = isinstance(said, str) and sentence_key(said) == sentence_key(str(text))
    if not same:
        raise Superseded(fact_id, rel, done)
    return done


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
