"""Several edits of the agent's memory in one write, for the weekly review's fixes: set fields of facts, add
facts, rewrite a summary; then a pass, so the vault and git follow in the same call. (One fact at a time, as a
plugin remembers, supersedes or forgets, is ``memory.py``.)

Each write goes through the one write path (``app/write.py``): under the run lock, after the remote round, it
reads the file, edits it in its own style (``memory/items_edit.py`` splices the change into the original text)
and puts it back only if it still holds what was read. Every change of one
call is checked before any is written: an id that is not there changes nothing at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from vaultsync.app.fact_fields import new_records
from vaultsync.app.facts import check_entity, entity_dir
from vaultsync.config import Config
from vaultsync.errors import FileChanged, Invalid, MemoryEditError, NotFound, Stopped
from vaultsync.keys import fact_key
from vaultsync.memory.items import ItemsError, parse_items
from vaultsync.memory.items_edit import AppendEntry, Edit, SetFields, apply_edits, new_items_file
from vaultsync.model import AGENT, PERSON, Actor, Report
from vaultsync.options import PassOptions
from vaultsync.system.fs import atomic_write, read_or_none
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["MemoryEditError", "MemoryWrite", "add_facts", "edit_facts", "write_summary"]


@dataclass
class MemoryWrite:
    """What a write did: the memory files it changed and the pass that followed (None in a dry run or when
    nothing changed)."""

    written: list[str] = field(default_factory=list)
    sync: Report | None = None
    added: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (entity, record) of each new fact


FactFields = Mapping[str, Mapping[str, Any]]  # fact id -> the fields to set


def edit_facts(
    cfg: Config, edits: Mapping[str, FactFields], subject: str, today: date | None = None, dry_run: bool = False
) -> MemoryWrite:
    """Set fields of facts, by entity (folder under life/) and fact id, in one locked write, then a pass; the
    person's decision (a ticked review fix), so committed as the person."""
    facts = frozenset(fact_key(rel.strip("/"), fact_id) for rel, fields in edits.items() for fact_id in fields)
    return _write(cfg, lambda _: _fact_edits(cfg, edits), subject, today, dry_run, actor=PERSON, units=facts)


NewFact = tuple[str, Mapping[str, Any], date | None]  # the text, its other fields, the day it was said


def add_facts(
    cfg: Config,
    facts: Mapping[str, Sequence[NewFact]],
    subject: str,
    today: date | None = None,
    dry_run: bool = False,
    record: tuple[Path, bytes | None, bytes] | None = None,
) -> MemoryWrite:
    """Append new facts to entities (folder under life/ -> facts); an entity folder that does not exist is made.

    Ids are minted under the lock, as ``remember`` mints them (the entity's own pattern, past every id it ever
    held), so a write racing this one cannot take the same id. ``record`` is a state file written with the facts
    (the extraction's progress): (path, what it held when read, what it gets); if it no longer holds what was
    read, nothing is written, so two extractions never both hand in the same text."""
    return _write(cfg, lambda result: _additions(cfg, facts, result), subject, today, dry_run, record)


def write_summary(
    cfg: Config, rel: str, text: str, expected: bytes | None, subject: str, today: date | None = None
) -> MemoryWrite:
    """Replace an entity's summary.md, if it still holds ``expected`` (None: if it does not exist)."""
    path = _entity(cfg, rel) / "summary.md"
    return _write(cfg, lambda _: [(path, expected, text.encode("utf-8"))], subject, today, False)


Planned = list[tuple[Path, bytes | None, bytes]]  # (file, what it held when read, what it gets)


def _write(
    cfg: Config,
    plan: Any,
    subject: str,
    today: date | None,
    dry_run: bool,
    record: tuple[Path, bytes | None, bytes] | None = None,
    actor: Actor = AGENT,
    units: frozenset[str] | None = None,
) -> MemoryWrite:
    result = MemoryWrite()
    if dry_run:  # a look writes nothing, so it needs neither the lock nor the remote
        result.written = [str(p) for p, old, new in plan(result) if old != new]
        return result

    def apply() -> OwnWrites:
        if record is not None and read_or_none(record[0]) != record[1]:
            raise MemoryEditError(f"{record[0]}: changed since it was read (another run?); nothing written, run again")
        for path, old, new in plan(result):
            if old == new:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                atomic_write(path, new, old)
            except FileChanged:
                raise MemoryEditError(f"{path}: changed while it was being edited; run again") from None
            result.written.append(str(path))
        if record is not None:  # after the facts: a run killed in between hands the same text in again
            record[0].parent.mkdir(parents=True, exist_ok=True)
            atomic_write(record[0], record[2], record[1])
        # The files written are named: the pass stats those, and a person's fix carried by a later pass (git
        # busy now) is still committed as theirs (``state/actors.py``).
        return OwnWrites(bool(result.written), _walk_keys(cfg, result.written), units=units)

    try:
        report = write(cfg, WriteRequest("edit", actor, PassOptions(today=today, commit_subject=subject), apply))
    except Stopped as exc:
        raise MemoryEditError(f"{exc}; nothing written") from None
    result.sync = report if result.written else None
    return result


def _walk_keys(cfg: Config, written: list[str]) -> frozenset[str] | None:
    """The memory files written as a walk names them (``life/areas/people/sarah/items.json``); None when one
    lies outside both memory roots, for the pass then walks the whole memory."""
    keys = set()
    for path in map(Path, written):
        root = next(
            ((n, r) for n, r in (("life", cfg.life), ("workspace", cfg.workspace)) if path.is_relative_to(r)), None
        )
        if root is None:
            return None
        keys.add(f"{root[0]}/{path.relative_to(root[1]).as_posix()}")
    return frozenset(keys)


def _entity(cfg: Config, rel: str) -> Path:
    """The entity's folder, checked as every writer checks it (PARA folder, safe names, no symbolic link)."""
    try:
        return entity_dir(cfg, check_entity(rel))
    except (Invalid, NotFound) as exc:
        raise MemoryEditError(f"{rel!r} is not an entity folder under life/ ({exc})") from None


def _read(path: Path) -> tuple[bytes, Any]:
    raw = read_or_none(path)
    if raw is None:
        raise MemoryEditError(f"{path}: no such file")
    try:
        return raw, parse_items(raw)
    except ItemsError as exc:
        raise MemoryEditError(f"{path}: {exc}") from None


def _fact_edits(cfg: Config, edits: Mapping[str, FactFields]) -> Planned:
    planned: Planned = []
    for rel, by_id in edits.items():
        path = _entity(cfg, rel) / "items.json"
        raw, doc = _read(path)
        index = {e.value.get("id"): e.index for e in doc.entries if isinstance(e.value, dict)}
        missing = sorted(set(by_id) - set(index))
        if missing:
            raise MemoryEditError(f"{path}: no fact {', '.join(missing)}")
        changes: list[Edit] = [SetFields(index[fid], dict(values)) for fid, values in by_id.items()]
        planned.append((path, raw, apply_edits(doc, changes)))
    return planned


def _additions(cfg: Config, facts: Mapping[str, Sequence[NewFact]], result: MemoryWrite) -> Planned:
    planned: Planned = []
    for rel, new in facts.items():
        path = _entity(cfg, rel) / "items.json"
        raw, doc = _read(path) if path.exists() else (None, None)
        made = new_records(cfg, rel, doc, list(new))
        result.added += [(rel, r) for r in made]
        data = apply_edits(doc, [AppendEntry(r) for r in made]) if doc is not None else new_items_file(made)
        planned.append((path, raw, data))
    return planned
