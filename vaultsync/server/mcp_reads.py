"""The MCP server's reads beyond one entity: the list of entities, a daily note, MEMORY.md's sections; the same
as resources a client can attach (MEMORY.md, today's daily note, any entity); and one prompt.

Each is a few lines over ``app/entities.py`` or ``app/workspace.py``. Resources are listed only while they can
be read (MEMORY.md when the workspace has one, today's daily note once it is written), and entities through a
template, since there may be thousands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import ToolAnnotations
from pydantic import Field

from vaultsync.api import (
    MEMORY_FILE,
    MemorySection,
    count_facts,
    daily_note,
    daily_path,
    memory_sections,
    memory_text,
)
from vaultsync.api import get_entity as read_entity
from vaultsync.config import Config
from vaultsync.server.mcp_args import CheckedServer

__all__ = ["READ", "register"]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)  # every read tool's, here and in mcp.py
Para = Literal["projects", "areas", "resources", "archives"]
Day = Annotated[str | None, Field(description="YYYY-MM-DD, or today (the default)")]
Answer = Callable[[Callable[[], Any]], Any]


def register(server: CheckedServer, cfg: Config, answer: Answer) -> None:
    @server.tool(
        description="Every entity with its kind (people, companies, projects ...), its PARA folder (projects, "
        "areas, resources, archives; folder is the vault's name for it) and how many facts it holds. Use it to "
        "see what is known about whom before reading one entity with get_entity.",
        annotations=READ,
    )
    def list_entities(
        para: Annotated[Para | None, Field(description="only the entities of this PARA folder")] = None,
    ) -> dict[str, Any]:
        return {"entities": [e.to_json() for e in answer(lambda: count_facts(cfg, para))]}

    @server.tool(description="Read a daily note (the agent's log of a day, memory/YYYY-MM-DD.md).", annotations=READ)
    def read_daily_note(day: Day = None) -> dict[str, Any]:
        return dict(answer(lambda: daily_note(cfg, day)))

    @server.tool(
        description="Read MEMORY.md, the agent's long-term notes, as sections: title, level, priority tag "
        "([P0] kept for ever, [P1]/[P2] until their date's time runs out) and text. 'section' keeps the sections "
        "whose title holds it.",
        annotations=READ,
    )
    def read_memory(
        section: Annotated[str | None, Field(description="part of a section's title, any case")] = None,
    ) -> dict[str, Any]:
        found = answer(lambda: _Sections(memory_sections(cfg, section)))
        return {"path": MEMORY_FILE, "sections": found}

    @server.resource(
        "vaultsync://memory", name="MEMORY.md", description="the agent's long-term notes", mime_type="text/markdown"
    )
    def memory_file() -> str:
        return str(_read(lambda: memory_text(cfg)))

    @server.resource(
        "vaultsync://daily/today",
        name="today's daily note",
        description="memory/YYYY-MM-DD.md of today, once the agent has written one",
        mime_type="text/markdown",
    )
    def today_note() -> str:
        return str(_read(lambda: daily_note(cfg)).text)

    server.listed_when["vaultsync://memory"] = lambda: (cfg.workspace / MEMORY_FILE).is_file()
    server.listed_when["vaultsync://daily/today"] = lambda: daily_path(cfg).is_file()

    @server.resource(
        "vaultsync://entity/{+entity}",
        name="entity",
        description="an entity (e.g. vaultsync://entity/areas/people/sarah-chen): its summary and facts",
        mime_type="application/json",
    )
    def entity_resource(entity: str) -> str:
        return json.dumps(_read(lambda: read_entity(cfg, entity)).compact(), ensure_ascii=False, indent=1)

    @server.prompt(
        name="about",
        description="What memory holds about an entity, as context for a conversation about it.",
    )
    def about(entity: Annotated[str, Field(description="the entity's folder under life/")]) -> str:
        shown = _read(lambda: read_entity(cfg, entity)).compact()
        lines = [f"What I remember about {shown['name']} ({entity}):", "", shown["summary"].strip(), ""]
        lines += [f"- {f['fact']} [{f['id']}]" for f in shown["active"]]
        lines += ["", "Use recall for more, and remember or supersede when this conversation changes a fact."]
        return "\n".join(lines)


class _Sections:
    def __init__(self, sections: list[MemorySection]) -> None:
        self.sections = sections

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.sections]


def _read(call: Callable[[], Any]) -> Any:
    """A resource's or prompt's read, its client mistakes as a ``ResourceError`` naming what is missing."""
    try:
        return call()
    except (LookupError, ValueError) as exc:
        raise ResourceError(str(exc)) from None
