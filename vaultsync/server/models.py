"""The shapes the HTTP API answers with, declared so ``/openapi.json`` describes them.

A route still builds its answer with the app's own ``to_json()`` (one shape for the CLI's ``--json``, the API
and the MCP tools); these models only describe it, so a generated client gets typed results and a schema
check (tests/test_api_schema.py) catches an answer that drifts from what the document promises. Objects are
open (``extra="allow"``): a field added later is not a broken client.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Health(_Open):
    ok: bool
    version: str


class Run(_Open):
    at: str = Field(description="ISO 8601 with the UTC offset")
    kind: str = Field(description="sync, watch, scheduled, api, mcp, remember, ...")
    exit_code: int
    summary: str


class StandingProblem(_Open):
    path: str
    message: str
    severity: str = Field(description="error, warning or note")


class Schedule(_Open):
    entries: list[str]
    every: str
    next_run: str | None
    stale: bool


class HeldChange(_Open):
    """A change the shrink guard did not carry: the file, who made it, its size before and after."""

    path: str
    scope: str
    writer: str
    side: str
    before: int
    after: int
    unit: str
    rule: str


class Status(_Open):
    last_run: Run | None
    last_finished: Run | None
    open_conflicts: list[str]
    problems: list[StandingProblem]
    held: list[HeldChange]
    schedule: Schedule


class ReportChange(_Open):
    side: str
    scope: str
    what: str


class ReportConflict(_Open):
    key: str
    scope: str
    detail: str
    copy_path: str


class Remote(_Open):
    remote: str
    fetched: bool
    integrated: list[str]
    pushed: bool
    ahead: int
    behind: int
    waiting_since: str
    why: str


class Report(_Open):
    """One pass's report, as ``vaultsync sync --json`` prints it."""

    dry_run: bool
    exit_code: int
    stopped: str | None
    actions: list[str]
    changes: list[ReportChange]
    conflicts: list[ReportConflict]
    open_conflicts: list[str]
    problems: list[StandingProblem]
    commits: list[str]
    files_written: int
    quick: bool
    scoped: bool
    remote: Remote | None


class Fact(_Open):
    """One fact: its record as ``items.json`` holds it, where its note is, and the ETag to send back."""

    id: str
    entity: str = Field(description="the entity's folder under life/")
    record: dict[str, Any]
    note: str = Field(description="vault-relative path of the fact note")
    etag: str


class EntityRef(_Open):
    entity: str
    para: str
    slug: str
    note: str


class EntityList(_Open):
    entities: list[EntityRef]


class Entity(EntityRef):
    name: str
    summary: str
    active: list[Fact]
    superseded: list[Fact]
    other: list[Fact]
    problems: list[str]


class PassSummary(_Open):
    exit_code: int
    summary: str


class RemoteRound(_Open):
    """A write with a ``[remote]`` runs the remote round: its commit pushed, or waiting since when, and why."""

    pushed: bool
    waiting_since: str | None
    why: str | None


class Written(_Open):
    """What a write did: the fact as stored (none after forget), the one it replaced or removed, the pass."""

    fact: Fact | None
    previous: Fact | None
    synced: bool
    sync: PassSummary
    commits: list[str]
    remote: RemoteRound | None = Field(description="with a [remote]: pushed, or waiting (exit 6) and why")
    already: bool = Field(
        False, description="true: the memory held this change already (a repeated call); nothing was written"
    )


def _unset(value: object) -> bool:
    return value is None


def _part(description: str) -> Any:
    """A part of an answer given only when it applies: left out, never ``null``, so an answer without it is the
    same as before the part existed."""
    return Field(None, exclude_if=_unset, description=description)


class Explain(_Open):
    """Why a hit ranks where it does (docs/recall.md, How hits are ranked): its bm25 and each part added to it."""

    bm25: float = Field(description="the piece's own bm25 score in the index")
    context: float | None = _part("the neighbouring lines' shares of their bm25, added to it")
    entity: float | None = _part("boost: the query names an entity, speaker or the person the piece is of or names")
    period: float | None = _part("boost: the piece is dated inside the period the query names")
    when: float | None = _part("boost: the query asks when and the piece carries a date")
    cosine: float | str | None = _part(
        "with the semantic re-ranker on: the cosine of the piece's and the question's embeddings, or why none"
    )


class Hit(_Open):
    kind: str = Field(description="fact, summary, memory or daily")
    root: str
    path: str
    lines: list[int] | None
    id: str | None
    entity: str | None
    status: str | None
    superseded_by: str | None
    vault_path: str | None
    text: str
    score: float
    explain: Explain | None = _part("only when asked for (explain=true): the score's parts")


class HitList(_Open):
    query: str
    hits: list[Hit]
    semantic: str | None = _part("with the semantic re-ranker configured and explain=true: on, or why lexical only")


class Change(_Open):
    when: str
    who: str
    side: str = Field(description="agent or person")
    what: str
    commit: str
    paths: list[str]
    agent: str | None = Field(None, description="which of a program's agents wrote it (the Agent trailer)")
    session: str | None = Field(None, description="the conversation it came from (the Session trailer)")


class History(_Open):
    changes: list[Change]


class FieldIssue(_Open):
    loc: list[str | int]
    msg: str
    type: str


class Choice(_Open):
    msg: str
    entities: list[str]


class Successor(_Open):
    """A fact superseded already, by another successor than the one asked for (409)."""

    msg: str
    id: str
    entity: str
    successor: str = Field(description="the id of the fact that replaced it")


class Conflict(_Open):
    copy_path: str = Field(alias="copy", description="the conflict copy's vault path")
    note: str = Field(description="the note it stands beside")
    unit: str
    detail: str
    note_exists: bool


class ConflictList(_Open):
    conflicts: list[Conflict]


class Resolution(_Open):
    """A conflict resolved: which version was kept and the pass that carried it."""

    resolved: Conflict
    kept: str
    synced: bool
    sync: PassSummary
    commits: list[str]
    open_conflicts: list[str]


class Inbox(_Open):
    facts: list[Fact]


class LatestReview(_Open):
    note: str | None = Field(description="the newest review note's vault path; null before the first review")


class ContextFact(_Open):
    id: str
    fact: str | None
    status: str


class ContextEntity(_Open):
    entity: str
    name: str
    note: str | None
    summary: str
    facts: list[ContextFact]


class Context(_Open):
    """What an agent should know before it answers a message, as text within the budget and as parts."""

    query: str
    budget: int
    entities: list[ContextEntity]
    hits: list[Hit]
    text: str = Field(description="the context to put before the message")
    truncated: bool = Field(description="true when the budget cut something off")


class Captured(_Open):
    """A turn appended to today's daily note and the pass that committed it."""

    path: str
    heading: str
    synced: bool
    sync: PassSummary
    commits: list[str]


class Problem(BaseModel):
    """Every error: ``detail`` is a sentence, a list of field issues (422), the entities to choose from, or the
    successor of a fact superseded already."""

    detail: str | list[FieldIssue] | Choice | Successor


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route that can answer with these error codes."""
    return {code: {"model": Problem, "description": _MEANING[code]} for code in codes}


def stream_errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """As :func:`errors`, for a route whose success is not JSON: its errors still are."""
    problem = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    return {code: {"description": _MEANING[code], "content": problem} for code in codes}


_MEANING = {
    401: "missing or wrong bearer token",
    404: "no such entity or fact",
    409: "the request meets the vault's state: an ambiguous id, an unreadable file, a pass running, a fact "
    "superseded already, an Idempotency-Key whose first request is still being answered",
    412: "If-Match no longer matches the fact",
    413: "request body too large",
    422: "a value the route cannot use (an Idempotency-Key sent with another request too); detail names the field",
    503: "a pass held the lock too long, or a root folder is missing; try again",
}
