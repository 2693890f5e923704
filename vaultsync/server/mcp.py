"""``vaultsync mcp``: the memory as Model Context Protocol tools on standard input and output.

Each tool is a few lines over the same ``app/`` function the HTTP routes call, so an agent using MCP and a
plugin using HTTP see one behaviour. A client's mistake (an unknown id, a bad name, a stale version) comes
back as a tool error whose text says what to do, never as a crash of the server. Adding a tool for another
use case is one more decorated function in its family (``_fact_tools`` and the like; the reads, resources
and prompt are in ``server/mcp_reads.py``). An argument the tool's schema refuses gets one line naming it and
what is allowed (``server/mcp_args.py``), not the validator's report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from vaultsync import __version__
from vaultsync.api import (
    BUDGET,
    PassOptions,
    RecallOptions,
    VaultsyncError,
    overview,
    patch,
    refused,
    sync,
)
from vaultsync.api import (
    Entity as EntityRecord,
)
from vaultsync.api import append_daily as append_to_daily
from vaultsync.api import context as build_context
from vaultsync.api import forget as forget_fact
from vaultsync.api import get_entity as read_entity
from vaultsync.api import history as read_history
from vaultsync.api import recall as recall_memory
from vaultsync.api import remember as remember_fact
from vaultsync.api import supersede as supersede_fact
from vaultsync.config import Config
from vaultsync.model import Actor, client
from vaultsync.server import mcp_reads
from vaultsync.server.mcp_args import CheckedServer
from vaultsync.server.mcp_reads import READ

INSTRUCTIONS = (
    "Long-term memory kept as facts about entities (people, companies, projects) in files that a person also "
    "edits in Obsidian. Entities are named by their folder, e.g. areas/people/sarah-chen. Use get_entity before "
    "changing facts, and recall to find what is known when the entity is not; use remember for a new fact, "
    "supersede when a fact is no longer true (it stays as history), forget only for a fact that should never "
    "have been kept, edit_fact to correct a fact's wording, and history to see who changed a fact and when. "
    "list_entities shows what entities exist; read_memory and read_daily_note read the agent's own notes."
)
Entity = Annotated[
    str, Field(description="the entity: its folder under life/ (areas/people/sarah-chen) or its end (sarah-chen)")
]
FactId = Annotated[str, Field(description="the fact's id, e.g. sarah-chen-004")]
Pick = Annotated[str | None, Field(description="the entity, when several use the same fact id")]
Opt = Annotated[str | None, Field(description="optional")]
Kind = Literal["fact", "summary", "memory", "daily"]
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
# Adds once: a repeat answers with what the first call made (``already``), so calling twice is calling once.
ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
REPLACES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
SYNCS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _answer(call: Callable[[], Any]) -> dict[str, Any]:
    try:
        result = call()
    except VaultsyncError as exc:  # the family's one line, as the command line says it
        raise ToolError(exc.line()) from None
    except Exception as exc:
        # A full or read-only disk is the person's to fix: the same line as the command line's and HTTP's 503,
        # where the SDK would answer only that the tool failed.
        if why := refused(exc):
            raise ToolError(why) from None
        raise
    return result.to_json() if hasattr(result, "to_json") else result


def _actor(ctx: Context | None) -> Actor:
    """The client as it named itself when it connected (``clientInfo.name``): git names it as the actor."""
    return client(_client_name(ctx))


def _client_name(ctx: Context | None) -> str | None:
    params = ctx.session.client_params if ctx is not None else None
    return params.client_info.name if params is not None else None


def _heading_source(ctx: Context | None) -> str | None:
    """The client's own name as a daily entry's heading can hold it (one line, no ``#``, 60 characters), the
    default source of what it appends, as ``X-Vaultsync-Client`` is over HTTP; None for a client without one."""
    name = " ".join((_client_name(ctx) or "").replace("#", " ").split())[:60].strip()
    return name or None


def _fields(**given: Any) -> dict[str, Any]:
    return {k: v for k, v in given.items() if v is not None}


def create_server(cfg: Config) -> MCPServer:
    server = CheckedServer(name="vaultsync", version=__version__, instructions=INSTRUCTIONS)
    for register in (_fact_tools, _lookup_tools, _turn_tools, _pass_tools):
        register(server, cfg)
    mcp_reads.register(server, cfg, _answer)
    return server


def _fact_tools(server: MCPServer, cfg: Config) -> None:
    """Writes to one fact: remember, supersede, forget, edit; each commits as the client that asked."""

    @server.tool(
        description="Add a fact to an entity. Returns the stored fact with its new id (e.g. sarah-chen-008). A "
        "sentence the entity already holds as an active fact is not added again: the answer is that fact, with "
        "already=true.",
        annotations=ONCE,
    )
    def remember(
        entity: Entity,
        fact: Annotated[str, Field(description="the fact, one self-contained sentence")],
        category: Opt = None,
        timestamp: Annotated[str | None, Field(description="when it became true, YYYY-MM-DD; default today")] = None,
        source: Annotated[str | None, Field(description="where it came from, e.g. conversation")] = None,
        create: Annotated[bool, Field(description="create the entity if it does not exist")] = False,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        extra = _fields(category=category, timestamp=timestamp, source=source)
        actor = _actor(ctx)
        return _answer(lambda: remember_fact(cfg, entity, fact, extra, create=create, actor=actor))

    @server.tool(
        description="Mark a fact as no longer true, replaced by an existing fact ('by') or by a new one ('fact'). "
        "Give exactly one of the two. Asked again for a fact superseded already, it answers with the successor "
        "(already=true) when the successor is the same, and refuses naming the successor when it is another.",
        annotations=ONCE,
    )
    def supersede(
        id: FactId,
        by: Annotated[str | None, Field(description="id of an existing fact of the same entity")] = None,
        fact: Annotated[str | None, Field(description="text of a new fact that replaces it")] = None,
        category: Opt = None,
        entity: Pick = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        extra = _fields(category=category)
        actor = _actor(ctx)
        return _answer(lambda: supersede_fact(cfg, id, by=by, fact=fact, fields=extra, entity=entity, actor=actor))

    @server.tool(
        description="Remove a fact from memory entirely (git history and the trash keep a copy). A fact that is "
        "gone already is answered with already=true.",
        annotations=REPLACES,
    )
    def forget(id: FactId, entity: Pick = None, ctx: Context | None = None) -> dict[str, Any]:
        actor = _actor(ctx)
        return _answer(lambda: forget_fact(cfg, id, entity=entity, actor=actor))

    @server.tool(
        description="Correct the wording of a fact in place (a typo, a clearer sentence). When the fact stopped "
        "being true, use supersede instead, which keeps the old one as history.",
        annotations=REPLACES,
    )
    def edit_fact(
        id: FactId,
        text: Annotated[str, Field(min_length=1, description="the fact's new text, one self-contained sentence")],
        entity: Pick = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        actor = _actor(ctx)
        return _answer(lambda: patch(cfg, id, {"fact": text}, entity=entity, actor=actor))


def _lookup_tools(server: MCPServer, cfg: Config) -> None:
    """Reads of the memory as it stands and as it was: an entity, a search, the history."""

    @server.tool(
        description="Read an entity: its summary and its active, superseded and other facts with their ids and "
        "dates. full=true adds each fact's whole record, note path and version.",
        annotations=READ,
    )
    def get_entity(
        entity: Entity,
        full: Annotated[bool, Field(description="every field of every fact, as stored")] = False,
    ) -> dict[str, Any]:
        return _answer(lambda: _Shown(read_entity(cfg, entity), full))

    @server.tool(
        description="Search the whole memory (facts, entity summaries, MEMORY.md, daily notes) for plain words; "
        "current facts come first, a superseded one says what replaced it. Each hit has its kind, its path, "
        "the fact's id and entity when it is a fact, and the matching text. Use it before remembering, to avoid "
        "a duplicate, and to find the entity a fact belongs to.",
        annotations=READ,
    )
    def recall(
        query: Annotated[str, Field(min_length=1, description="plain words to look for; no search syntax")],
        limit: Annotated[int, Field(ge=1, le=1_000, description="at most this many hits")] = 10,
        kind: Annotated[list[Kind] | None, Field(description="only these kinds of piece; default all")] = None,
        entity: Annotated[
            str | None, Field(description="only this entity and those below it, e.g. areas/people/sarah-chen")
        ] = None,
        status: Annotated[Literal["active", "all"], Field(description="active: leave out superseded facts")] = "all",
        since: Annotated[str | None, Field(description="only pieces dated on or after, YYYY-MM-DD")] = None,
        until: Annotated[str | None, Field(description="only pieces dated on or before, YYYY-MM-DD")] = None,
        recency: Annotated[bool, Field(description="false: rank by relevance alone, not newer first")] = True,
        explain: Annotated[
            bool,
            Field(description="true: each hit says its bm25, its boosts and (semantic re-ranker on) its cosine"),
        ] = False,
    ) -> dict[str, Any]:
        kinds = tuple(kind or ())
        options = RecallOptions(limit, kinds, entity, status == "active", since, until, recency, explain=explain)
        return _answer(lambda: recall_memory(cfg, query, options))

    @server.tool(
        description="Who changed an entity, a fact or a note, when, and what changed (e.g. 'status: active -> "
        "superseded'), newest first, from the vault's git history; side says whether the agent or the person "
        "made it. Without a target: the latest changes across the memory.",
        annotations=READ,
    )
    def history(
        target: Annotated[
            str | None, Field(description="an entity (areas/people/sarah-chen), a fact id (sarah-chen-004) or a path")
        ] = None,
        since: Annotated[str | None, Field(description="a date (YYYY-MM-DD) or git's '2 weeks ago'")] = None,
        limit: Annotated[int, Field(ge=1, le=1_000, description="at most this many changes")] = 50,
    ) -> dict[str, Any]:
        return _answer(lambda: read_history(cfg, target, since=since, limit=limit))


def _turn_tools(server: MCPServer, cfg: Config) -> None:
    """A turn's two tools: what to know before answering, and the entry it leaves in today's note."""

    @server.tool(
        description="What to know before answering a message: the current facts and summary of the entities it "
        "names, then the best related memories (never a superseded fact), as text within a character budget.",
        annotations=READ,
    )
    def context(
        message: Annotated[str, Field(min_length=1, description="the person's message, as written")],
        budget: Annotated[int, Field(ge=100, le=50_000, description="at most this many characters")] = BUDGET,
        min_score: Annotated[
            float, Field(ge=0, le=1_000_000, description="leave out related memories scoring below this")
        ] = 0.0,
    ) -> dict[str, Any]:
        return _answer(lambda: build_context(cfg, message, budget, min_score=min_score))

    @server.tool(
        description="Append an entry to today's daily note (memory/YYYY-MM-DD.md) under a time heading: the raw "
        "timeline that extract and the inbox later turn into facts. It only appends; nothing is rewritten.",
        annotations=ADDS,
    )
    def append_daily(
        text: Annotated[str, Field(min_length=1, description="what happened, as the agent would write it")],
        source: Annotated[
            str | None, Field(description="who wrote it, shown in the heading; default the client's own name")
        ] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        actor, said = _actor(ctx), source if source is not None else _heading_source(ctx)
        return _answer(lambda: append_to_daily(cfg, text, source=said, actor=actor))


def _pass_tools(server: MCPServer, cfg: Config) -> None:
    """A pass on demand, and the state the last one left."""

    @server.tool(
        name="sync",
        description="Run one sync pass between the memory files and the Obsidian vault; returns its report.",
        annotations=SYNCS,
    )
    def sync_now() -> dict[str, Any]:
        return _answer(lambda: sync(cfg, PassOptions(), kind="mcp"))

    @server.tool(description="The last sync run, open conflicts, standing problems and the schedule.", annotations=READ)
    def status() -> dict[str, Any]:
        return _answer(lambda: overview(cfg))


class _Shown:
    """An entity in the shape asked for: compact by default, the whole records with ``full``."""

    def __init__(self, entity: EntityRecord, full: bool) -> None:
        self.entity, self.full = entity, full

    def to_json(self) -> dict[str, Any]:
        return self.entity.to_json() if self.full else self.entity.compact()


def run(cfg: Config) -> None:
    """Serve until the client closes standard input."""
    create_server(cfg).run("stdio")
