"""Reading entities and facts for the faces: the list of entities, one entity with its facts, one fact.

Reads take no lock and read the agent's files as they are now: a fact the agent wrote a moment ago is found
before any pass has carried it into the vault (its note path is where the next pass puts it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultsync.app.facts import FactView, NotFound, entity_dir, is_entity, locate, records, resolve, view
from vaultsync.config import Config
from vaultsync.memory.tree import list_memory, scan_memory_scope
from vaultsync.vault.layout import VaultLayout, slug_of

__all__ = ["Entity", "EntityRef", "get_entity", "get_fact", "list_entities"]


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
