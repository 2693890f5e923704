"""Reading entities and facts for the faces: the list of entities, one entity with its facts, one fact.

Reads take no lock and read the agent's files as they are now: a fact the agent wrote a moment ago is found
before any pass has carried it into the vault (its note path is where the next pass puts it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultsync.app.facts import (
    FactView,
    entity_dir,
    is_entity,
    locate,
    read_items,
    records,
    resolve,
    view,
)
from vaultsync.config import Config
from vaultsync.errors import NotFound, Unreadable
from vaultsync.memory.tree import list_memory, scan_memory_scope
from vaultsync.vault.layout import VaultLayout, slug_of

__all__ = ["Entity", "EntityCounts", "EntityRef", "count_facts", "get_entity", "get_fact", "list_entities"]


@dataclass(frozen=True)
class EntityRef:
    entity: str  # the folder under life/
    para: str
    slug: str
    note: str  # vault-relative path of the entity note

    def to_json(self) -> dict[str, Any]:
        return {"entity": self.entity, "para": self.para, "slug": self.slug, "note": self.note}


@dataclass
class Entity:
    ref: EntityRef
    name: str  # the summary's H1, else the slug
    summary: str  # summary.md's body
    facts: list[FactView] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        active = [f.to_json() for f in self.facts if f.record.get("status", "active") == "active"]
        superseded = [f.to_json() for f in self.facts if f.record.get("status") == "superseded"]
        other = [f.to_json() for f in self.facts if f.record.get("status", "active") not in ("active", "superseded")]
        return {
            **self.ref.to_json(),
            "name": self.name,
            "summary": self.summary,
            "active": active,
            "superseded": superseded,
            "other": other,
            "problems": self.problems,
        }

    def compact(self) -> dict[str, Any]:
        """The facts' text and what tells them apart, without note paths, ETags or repeated entity names: what an
        agent reads to decide, its facts in less than half the bytes of :meth:`to_json`'s."""
        shown: dict[str, list[dict[str, Any]]] = {"active": [], "superseded": [], "other": []}
        for f in self.facts:
            status = f.record.get("status", "active")
            short: dict[str, Any] = {"id": f.id, "fact": f.record.get("fact")}
            for key in ("category", "timestamp", "date"):
                if f.record.get(key) is not None:
                    short[key] = f.record[key]
            by = f.record.get("supersededBy", f.record.get("superseded_by"))
            if by:
                short["by"] = by
            group = status if status in ("active", "superseded") else "other"
            if group == "other":
                short["status"] = status
            shown[group].append(short)
        return {
            "entity": self.ref.entity,
            "name": self.name,
            "summary": self.summary,
            **shown,
            "problems": self.problems,
        }


@dataclass(frozen=True)
class EntityCounts:
    """An entity as a list of them shows it: what kind it is, where it sits, how many facts it holds."""

    ref: EntityRef
    active: int
    superseded: int
    total: int  # -1 when its items.json cannot be read
    problem: str = ""

    def to_json(self) -> dict[str, Any]:
        parts = self.ref.entity.split("/")
        return {
            "entity": self.ref.entity,
            "kind": parts[-2] if len(parts) > 2 else parts[0],  # as the entity note's ``kind`` property
            "para": self.ref.para,
            "folder": self.ref.note.split("/", 1)[0],
            "facts": {"active": self.active, "superseded": self.superseded, "total": self.total},
            **({"problem": self.problem} if self.problem else {}),
        }


def count_facts(cfg: Config, para: str | None = None) -> list[EntityCounts]:
    """Every entity (or those of one PARA folder) with its fact counts, read from its ``items.json``."""
    found = []
    for ref in list_entities(cfg):
        if para is not None and ref.para != para:
            continue
        try:
            held = [record for _, record in records(read_items(cfg, ref.entity)[1])]
        except Unreadable as exc:
            found.append(EntityCounts(ref, 0, 0, -1, str(exc)))
            continue
        statuses = [record.get("status", "active") for record in held]
        found.append(EntityCounts(ref, statuses.count("active"), statuses.count("superseded"), len(held)))
    return found


def _ref(cfg: Config, rel: str) -> EntityRef:
    return EntityRef(rel, rel.split("/", 1)[0], slug_of(rel), VaultLayout(cfg.layout).entity_note(rel))


def list_entities(cfg: Config) -> list[EntityRef]:
    """Every entity folder under ``life/``, found the way a pass finds them (without reading them)."""
    listing = list_memory(cfg.workspace, cfg.life, VaultLayout(cfg.layout).reserved_life_dirs())
    return [_ref(cfg, rel) for rel in sorted(listing.rels)]


def get_entity(cfg: Config, entity: str) -> Entity:
    rel = resolve(cfg, entity)
    if not is_entity(cfg, rel):
        raise NotFound(f"no entity {rel}")
    entity_dir(cfg, rel)
    scan = scan_memory_scope(cfg.workspace, cfg.life, [rel], [])
    found = scan.entities.get(rel)
    if found is None:
        raise NotFound(f"no entity {rel}")
    body = found.content.body
    heading = next((line[2:].strip() for line in body.splitlines() if line.startswith("# ")), "")
    facts = [view(cfg, rel, record) for _, record in records(found.doc)]
    problems = [p.line() for p in scan.problems]
    return Entity(_ref(cfg, rel), heading or slug_of(rel), body, facts, problems)


def get_fact(cfg: Config, fact_id: str, entity: str | None = None) -> FactView:
    """The fact with ``fact_id``; ``entity`` picks one when several entities use the id (``Ambiguous``)."""
    rel, _, record = locate(cfg, fact_id, entity)
    return view(cfg, rel, record)
