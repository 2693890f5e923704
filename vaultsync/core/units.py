"""Lining the two scans up with the base: one UnitState per unit key, each side's content in memory terms.

Unit contents are compared as values: fact records (dict), entity contents (EntityContent) and file bytes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from vaultsync.core.decide import UNKNOWN, Decision
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, fact_key, file_key, kind_of, split_fact_key
from vaultsync.memory.identity import assign_notes
from vaultsync.memory.tree import MemEntity, MemoryScan
from vaultsync.model import EntityContent, Problem, Record, Severity, canonical
from vaultsync.names import name_problem
from vaultsync.state.base import BaseEntry, json_text
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.notes import NoteError, entity_content, fact_record, same_value
from vaultsync.vault.scan import EMPTY_NOTE, Note, VaultEntity, VaultScan

# Vault notes that may create their memory file; any other new note in a mirrored folder is the person's own.
CREATABLE = ("workspace/MEMORY.md", "workspace/HEARTBEAT.md")


@dataclass
class UnitState:
    key: str
    kind: str
    base: Any = None
    memory: Any = None
    vault: Any = None
    vault_note: Note | None = None  # the note as found in the vault, if any
    decision: Decision | None = None


@dataclass
class Minted:
    """A fact note the person created: the record gets an id and the note is renamed to it."""

    rel: str
    note_id: str
    old_path: str
    old_raw: bytes  # what the note under its old name holds: it is removed only if it still does


@dataclass
class World:
    units: dict[str, UnitState] = field(default_factory=dict)
    mem_facts: dict[str, dict[str, tuple[int, Record]]] = field(default_factory=dict)
    styles: dict[str, dict[str, str]] = field(default_factory=dict)
    minted: dict[str, Minted] = field(default_factory=dict)  # unit key -> rename
    new_ids: list[tuple[str, str]] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # entities whose items.json cannot be read

    def ids(self) -> list[tuple[str, str]]:
        """(entity, fact id) of every id in use: the new ones and those the memory holds."""
        held = [
            (rel, str(r.get("id")))
            for rel, facts in self.mem_facts.items()
            for _, r in facts.values()
            if isinstance(r.get("id"), str)
        ]
        return self.new_ids + held

    def unit(self, key: str, kind: str) -> UnitState:
        state = self.units.get(key)
        if state is None:
            state = self.units[key] = UnitState(key, kind)
        return state


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
    world = World()
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
        _vault_entity(world, rel, ventity, derived, set(synced), ids_seen, today)
    for mem_path, note in vault.files.items():
        key = file_key(mem_path)
        state = world.units.get(key)
        managed = (
            state is not None
            or mem_path in CREATABLE
            or (mem_path.startswith("workspace/memory/") and layout.daily_of_note(note.path) is not None)
        )
        if not managed:
            world.foreign.append(note.path)
            continue
        state = world.unit(key, FILE)
        state.vault = _file_note(world, note, state.base)
        state.vault_note = note
    world.foreign += vault.foreign
    for state in world.units.values():
        if state.kind == ENTITY:
            state.memory = state.memory if state.memory is UNKNOWN else empty_to_none(state.memory)
            state.vault = state.vault if state.vault is UNKNOWN else empty_to_none(state.vault)
            state.base = empty_to_none(state.base)
    return world


def _file_note(world: World, note: Note, base: Any) -> bytes | Any:
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
    return UNKNOWN if note.broken else note.raw


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


def _vault_entity(
    world: World,
    rel: str,
    ventity: VaultEntity,
    base_derived: dict[str, Any] | None,
    synced_notes: set[str],
    ids_seen: dict[str, set[str]],
    today: date,
) -> None:
    if ventity.note is not None:
        state = world.unit(entity_key(rel), ENTITY)
        state.vault_note = ventity.note
        if ventity.note.broken:
            state.vault = UNKNOWN
        else:
            content, ignored = entity_content(ventity.note.props, ventity.note.body, state.base, base_derived)
            state.vault = content
            for prop in ignored:
                world.problems.append(
                    Problem(
                        ventity.note.path,
                        f"'{prop}' is computed from the facts; the edit was replaced (edit the facts instead)",
                        Severity.WARNING,
                    )
                )
    style = world.styles.get(rel, {})
    known = set(world.mem_facts.get(rel, {})) | set(synced_notes)
    # Notes already renamed to a minted id by a pass killed before it removed the original: by their text.
    renamed = {
        note.body.strip(): stem
        for stem, note in ventity.facts.items()
        if stem not in known and not note.broken and _is_minted(slug_of(rel), stem) and note.props.get("id") == stem
    }
    note_ids = {n: str(r["id"]) for n, (_, r) in world.mem_facts.get(rel, {}).items() if isinstance(r.get("id"), str)}
    for stem, note in ventity.facts.items():
        key = fact_key(rel, stem)
        if stem in known:
            state = world.unit(key, FACT)
            state.vault_note = note
            # Read against the record as last synced; with none (a killed first import, a vault put back from a
            # copy), against the memory's: a note rendered from it reads back as it, ``supersededBy: null`` and all.
            synced = state.base if state.base is not None else state.memory if isinstance(state.memory, dict) else None
            state.vault = UNKNOWN if note.broken else _read_fact(world, note, synced, style, note_ids)
            continue
        if note.broken or rel in world.unreadable:
            # A new fact cannot be written to an items.json nobody can read: it waits, as a note, for the fix.
            continue
        twin = renamed.get(note.body.strip()) if "id" not in note.props else None
        if (
            twin is not None
            and twin != stem
            and all(same_value(v, ventity.facts[twin].props.get(k)) for k, v in note.props.items())
        ):
            world.minted[fact_key(rel, twin)] = Minted(rel, twin, note.path, note.raw)  # finish that rename
            continue
        _new_fact(world, rel, stem, note, style, ids_seen, today, known, note_ids)


def _read_fact(
    world: World, note: Note, synced: Record | None, style: dict[str, str], note_ids: dict[str, str]
) -> Record | Any:
    """The record a synced fact's note stands for, or UNKNOWN (reported) when the note cannot say."""
    try:
        return fact_record(note.props, note.body, synced, style, note_ids)
    except NoteError as exc:
        world.problems.append(Problem(note.path, f"{exc}; left untouched on both sides", standing=True))
        return UNKNOWN


def _new_fact(
    world: World,
    rel: str,
    stem: str,
    note: Note,
    style: dict[str, str],
    ids_seen: dict[str, set[str]],
    today: date,
    known: set[str],
    note_ids: dict[str, str],
) -> None:
    """A fact note the person made: it becomes a new fact with an id the agent will not also mint."""
    record = _read_fact(world, note, None, style, note_ids)
    if record is UNKNOWN:
        return  # it waits, as a note, until the person says which is the text
    # A template copied rather than inserted still holds its variables ("{{date:YYYY-MM-DD}}"): such a value
    # says nothing, so it is dropped like an empty one and gets the default below.
    record = {k: v for k, v in record.items() if v is not None and not _template_variable(v)}
    record["fact"] = str(record.get("fact", "")).strip()
    fact_id = record.get("id")
    taken = known | ids_seen.get(rel, set()) | {str(r.get("id")) for _, r in world.mem_facts.get(rel, {}).values()}
    if not isinstance(fact_id, str) or name_problem(fact_id) or fact_id in taken:
        fact_id = _mint(slug_of(rel), taken)
    text = record.pop("fact")
    record = {"id": fact_id, "fact": text, **{k: v for k, v in record.items() if k != "id"}}
    record.setdefault("status", "active")
    record.setdefault(style.get("timestamp", "timestamp"), today.isoformat())
    record.setdefault("source", "manual")
    key = fact_key(rel, fact_id)
    state = world.unit(key, FACT)
    state.vault = record
    state.vault_note = note
    known.add(fact_id)
    world.new_ids.append((rel, fact_id))
    if stem != fact_id:
        world.minted[key] = Minted(rel, fact_id, note.path, note.raw)


_TEMPLATE_VARIABLE = re.compile(r"\{\{[^{}]*\}\}\Z")


def _template_variable(value: Any) -> bool:
    return isinstance(value, str) and _TEMPLATE_VARIABLE.match(value.strip()) is not None


def _mint(slug: str, taken: set[str]) -> str:
    n = 1 + max((int(t.rsplit("-m", 1)[1]) for t in taken if _is_minted(slug, t)), default=0)
    return f"{slug}-m{n:03d}"


def _is_minted(slug: str, fact_id: str) -> bool:
    prefix = f"{slug}-m"
    return fact_id.startswith(prefix) and fact_id[len(prefix) :].isdigit()


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
