"""``vaultsync mcp``: the memory as Model Context Protocol tools on standard input and output.

Each tool is a few lines over the same ``app/`` function the HTTP routes call, so an agent using MCP and a
plugin using HTTP see one behaviour. A client's mistake (an unknown id, a bad name, a stale version) comes
back as a tool error whose text says what to do, never as a crash of the server. Adding a tool for another
use case is one more decorated function in ``_register``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from vaultsync.app import entities, memory
from vaultsync.app.facts import Ambiguous, Invalid, NotFound, Unreadable
from vaultsync.app.sync import LockHeld, PassOptions, overview, sync
from vaultsync.config import Config

INSTRUCTIONS = (
    "Long-term memory kept as facts about entities (people, companies, projects) in files that a person also "
    "edits in Obsidian. Entities are named by their folder, e.g. areas/people/sarah-chen. Use get_entity before "
    "changing facts; use remember for a new fact, supersede when a fact is no longer true (it stays as history), "
    "forget only for a fact that should never have been kept."
)
EXPECTED = (Invalid, NotFound, Ambiguous, Unreadable, memory.Stale, memory.Stopped, LockHeld)
Entity = Annotated[str, Field(description="the entity's folder under life/, e.g. areas/people/sarah-chen")]
FactId = Annotated[str, Field(description="the fact's id, e.g. sarah-chen-004")]
Pick = Annotated[str | None, Field(description="the entity, when several use the same fact id")]
Opt = Annotated[str | None, Field(description="optional")]


def _answer(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        result = call()
    except EXPECTED as exc:
        hint = f" (entities: {', '.join(exc.entities)})" if isinstance(exc, Ambiguous) else ""
        raise ToolError(f"{exc}{hint}") from None
    return result.to_json() if hasattr(result, "to_json") else result


def _fields(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def create_server(cfg: Config) -> MCPServer:
    server: MCPServer = MCPServer(name="vaultsync", instructions=INSTRUCTIONS)
    _register(server, cfg)
    return server


def _register(server: MCPServer, cfg: Config) -> None:
    @server.tool(description="Add a fact to an entity. Returns the stored fact with its new id (e.g. sarah-chen-008).")
    def remember(
        entity: Entity,
        fact: Annotated[str, Field(description="the fact, one self-contained sentence")],
        category: Opt = None,
        timestamp: Annotated[str | None, Field(description="when it became true, YYYY-MM-DD; default today")] = None,
        source: Annotated[str | None, Field(description="where it came from, e.g. conversation")] = None,
        create: Annotated[bool, Field(description="create the entity if it does not exist")] = False,
    ) -> dict[str, Any]:
        extra = _fields(category=category, timestamp=timestamp, source=source)
        return _answer(lambda: memory.remember(cfg, entity, fact, extra, create=create))

    @server.tool(
        description="Mark a fact as no longer true, replaced by an existing fact ('by') or by a new one ('fact'). "
        "Give exactly one of the two."
    )
    def supersede(
        id: FactId,
        by: Annotated[str | None, Field(description="id of an existing fact of the same entity")] = None,
        fact: Annotated[str | None, Field(description="text of a new fact that replaces it")] = None,
        category: Opt = None,
        entity: Pick = None,
    ) -> dict[str, Any]:
        extra = _fields(category=category)
        return _answer(lambda: memory.supersede(cfg, id, by=by, fact=fact, fields=extra, entity=entity))

    @server.tool(description="Remove a fact from memory entirely (git history and the trash keep a copy).")
    def forget(id: FactId, entity: Pick = None) -> dict[str, Any]:
        return _answer(lambda: memory.forget(cfg, id, entity=entity))

    @server.tool(description="Read an entity: its summary and its active, superseded and other facts, with ids.")
    def get_entity(entity: Entity) -> dict[str, Any]:
        return _answer(lambda: entities.get_entity(cfg, entity))

    @server.tool(
        name="sync",
        description="Run one sync pass between the memory files and the Obsidian vault; returns its report.",
    )
    def sync_now() -> dict[str, Any]:
        return _answer(lambda: sync(cfg, PassOptions(), kind="mcp"))

    @server.tool(description="The last sync run, open conflicts, standing problems and the schedule.")
    def status() -> dict[str, Any]:
        return _answer(lambda: overview(cfg))


def run(cfg: Config) -> None:
    """Serve until the client closes standard input."""
    create_server(cfg).run("stdio")
