"""Lining the two scans up with the base: one UnitState per unit key, each side's content in memory terms.

Unit contents are compared as values: fact records (dict), entity contents (EntityContent) and file bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from datetime import date
from typing import Any

from vaultsync.core.decide import UNKNOWN
from vaultsync.core.vault_facts import vault_entity
from vaultsync.core.world import World
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, fact_key, file_key, kind_of, split_fact_key
from vaultsync.memory.identity import assign_notes
from vaultsync.memory.tree import MemEntity, MemoryScan
from vaultsync.model import USERS_DIR, EntityContent, Problem, Record, Severity, canonical
from vaultsync.names import daily_date
from vaultsync.state.entry import BaseEntry, json_text
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.scan import EMPTY_NOTE, Note, VaultScan

# Vault notes that may create their memory file (and daily notes, and a person's ``users/<id>/USER.md``); any
# other new note in a mirrored folder is the person's own: a session note or DREAMS.md only the agent starts.
CREATABLE = ("workspace/MEMORY.md", "workspace/HEARTBEAT.md", "workspace/USER.md")


def decode_base(kind: str, entry: BaseEntry | None) -> Any:
    if entry is None:
        return None
    if kind == FILE:
        return entry.data
    value = entry.json()
    return EntityContent(value["props"], value["body"]) if kind == ENTITY else value


def encode_base(kind: str, value: Any) -> bytes:
    if kind == FILE:
        return bytes(value)
    if kind == ENTITY:
        value = {"props": value.props, "body": value.body}
    return json_text(value).encode()


def entity_style(records: list[Record]) -> dict[str, str]:
    """Which key names this entity's items.json uses, so a note a person creates fits in."""
    votes = Counter(k for r in records for k in r)
    style = {}
    if votes["date"] > votes["timestamp"]:
        style["timestamp"] = "date"
    if votes["superseded_by"] > votes["supersededBy"]:
        style["supersededBy"] = "superseded_by"
    return style


def empty_to_none(content: EntityContent | None) -> EntityContent | None:
    """An entity with no summary and one with an empty summary are the same to both sides."""
    if content is None or (not content.props and not content.body.strip()):
        return None
    return content


def gather(
    mem: MemoryScan,
    vault: VaultScan,
    base: dict[str, BaseEntry],
    layout: VaultLayout,
    ids_seen: dict[str, set[str]],
    today: date,
    unsettled: Collection[str] = (),
) -> World:
    """Line up every unit's base, memory and vault values.

    ``unsettled`` lists notes a pass wrote whose base it never recorded (killed, or git refused the commit):
    their computed properties are vaultsync's own newer values, not a person's edits.
    """
    world = World(fact_text=layout.layout.fact_text_property)
    base_facts: dict[str, dict[str, tuple[Record, int]]] = {}
    for key, entry in base.items():
        kind = kind_of(key)
        world.unit(key, kind).base = decode_base(kind, entry)
        if kind == FACT:
            rel, note = split_fact_key(key)
            base_facts.setdefault(rel, {})[note] = (entry.json(), int(entry.extra.get("index", -1)))

    for rel, entity in mem.entities.items():
        _memory_entity(world, rel, entity, base_facts.get(rel, {}))
    for mem_path, mem_file in mem.files.items():
        world.unit(file_key(mem_path), FILE).memory = UNKNOWN if mem_file.broken else mem_file.raw

    for rel, ventity in vault.entities.items():
        synced = base_facts.get(rel, {})
        records = [r for _, r in world.mem_facts.get(rel, {}).values()] or [r for r, _ in synced.values()]
        world.styles[rel] = entity_style(records)
        entry = base.get(entity_key(rel))
        derived = entry.extra.get("derived") if entry else None
        if ventity.note is not None and ventity.note.path in unsettled:
            derived = None
        vault_entity(world, rel, ventity, derived, set(synced), ids_seen, today)
    for mem_path, note in vault.files.items():
        key = file_key(mem_path)
        state = world.units.get(key)
        managed = (
            state is not None
            or mem_path in CREATABLE
            or (mem_path.startswith(f"workspace/{USERS_DIR}/") and mem_path.endswith("/USER.md"))
            or (
                mem_path.startswith("workspace/memory/")
                and daily_date(layout.daily_of_note(note.path) or "") is not None
            )
        )
        if not managed:
            world.foreign.append(note.path)
            continue
        state = world.unit(key, FILE)
        like = state.memory if isinstance(state.memory, bytes) else state.base
        state.vault = _file_note(world, note, state.base, like)
        state.vault_note = note
    world.foreign += vault.foreign
    for state in world.units.values():
        if state.kind == ENTITY:
            state.memory = state.memory if state.memory is UNKNOWN else empty_to_none(state.memory)
            state.vault = state.vault if state.vault is UNKNOWN else empty_to_none(state.vault)
            state.base = empty_to_none(state.base)
    return world


def _file_note(world: World, note: Note, base: Any, like: Any) -> bytes | Any:
    """A mirrored file's note as this pass reads it.

    An empty note is left alone (UNKNOWN, with a warning): Obsidian leaves one behind when it creates a note,
    and a read between the truncate and the write of a save sees one. Not when the file was synced empty,
    though: an agent clearing HEARTBEAT.md or rewriting a daily note by truncate-then-write empties it
    legitimately, and its later writes must reach the note.
    """
    if note.empty and base == b"":
        return b""
    if note.empty:
        world.problems.append(Problem(note.path, EMPTY_NOTE, Severity.WARNING, standing=True))
    return UNKNOWN if note.broken else in_style(note.raw, like)


def in_style(raw: bytes, like: Any) -> bytes:
    """``raw`` with the line endings of the memory file ``like`` (its bytes now, else as last synced), when that
    file uses one kind throughout: line endings are the memory's, so a sync app or an editor converting the
    vault's notes is no edit, and a real edit reaches the file in its own style."""
    if not isinstance(like, bytes):
        return raw
    crlf = like.count(b"\r\n")
    if crlf == 0 and b"\n" in like:
        return raw.replace(b"\r\n", b"\n")
    if crlf and crlf == like.count(b"\n"):
        return raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    return raw


def _memory_entity(world: World, rel: str, entity: MemEntity, base_facts: dict[str, tuple[Record, int]]) -> None:
    state = world.unit(entity_key(rel), ENTITY)
    # With its facts unreadable, an entity's counts and links would be wrong: its note waits for the fix too.
    state.memory = UNKNOWN if entity.summary_broken or entity.broken else entity.content
    if entity.broken:
        # Facts of an unreadable items.json are unknown: every fact unit of the entity is left alone.
        for note in base_facts:
            world.unit(fact_key(rel, note), FACT).memory = UNKNOWN
        world.mem_facts[rel] = {}
        world.unreadable.add(rel)
        return
    facts = assign_notes(slug_of(rel), entity.facts, base_facts)
    world.mem_facts[rel] = facts
    for note, (_, record) in facts.items():
        world.unit(fact_key(rel, note), FACT).memory = record
    if entity.unread_facts:
        # A fact that is there but cannot be read is not a deletion: of the facts synced before, those no
        # readable fact accounts for are left as they are on both sides.
        for note in base_facts.keys() - facts.keys():
            world.unit(fact_key(rel, note), FACT).memory = UNKNOWN


def same(kind: str) -> Any:
    if kind == FILE:
        return lambda a, b: a == b
    return lambda a, b: (a is None) == (b is None) and (a is None or canonical(plain(a)) == canonical(plain(b)))


def plain(value: Any) -> Any:
    # Line endings of a summary are the file's style, not its content: CRLF on one side and LF on the other
    # (an editor normalising on save) is no change, and each side keeps its own when written.
    if isinstance(value, EntityContent):
        return {"props": value.props, "body": value.body.replace("\r\n", "\n")}
    return value
