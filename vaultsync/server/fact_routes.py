"""The routes over one fact: read it, remember a new one, supersede, forget or patch it.

They are the family that carries a fact's version: each answer sends its ``ETag``, each change takes it back as
``If-Match`` and names its writer in ``X-Vaultsync-Client``, so they share those parameters and bodies here, apart
from ``http.py``'s reads of the whole memory; they share its token check, its event feed and its recall cache
(through ``answered``), handed in by ``create_app``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Protocol
from urllib.parse import quote

from fastapi import Body, FastAPI, Header, Path, Query
from fastapi import Depends as depends_on
from fastapi.params import Depends
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from vaultsync.api import Written, patch
from vaultsync.api import forget as forget_fact
from vaultsync.api import get_fact as read_fact
from vaultsync.api import remember as remember_fact
from vaultsync.api import supersede as supersede_fact
from vaultsync.config import Config
from vaultsync.model import Actor, client
from vaultsync.server import models
from vaultsync.server.events import Events
from vaultsync.server.idempotency import KEYED
from vaultsync.server.models import errors

CLIENT_HEADER = "X-Vaultsync-Client"
AGENT_HEADER = "X-Vaultsync-Agent"
SESSION_HEADER = "X-Vaultsync-Session"
WRITER_HEADERS = (CLIENT_HEADER, AGENT_HEADER, SESSION_HEADER)

Text = Annotated[str, Field(min_length=1, max_length=20_000)]
Short = Annotated[str, Field(max_length=1_000)]
EntityQuery = Annotated[
    str | None,
    Query(max_length=1_000, description="the entity (areas/people/sarah or sarah), when the id is used by several"),
]
FactId = Annotated[str, Path(max_length=200, description="the fact's id, e.g. sarah-chen-004")]
IfMatch = Annotated[str | None, Header(max_length=1_000, description="the ETag read with the fact; 412 if it changed")]
Client = Annotated[
    str | None,
    Header(alias=CLIENT_HEADER, max_length=200, description="the program writing, named in git: vaultsync api (name)"),
]
AgentId = Annotated[
    str | None,
    Header(alias=AGENT_HEADER, max_length=200, description="which of the program's agents writes; git trailer Agent"),
]
SessionKey = Annotated[
    str | None,
    Header(alias=SESSION_HEADER, max_length=1_000, description="the conversation it writes from; git trailer Session"),
]


def writer(by: Client = None, agent: AgentId = None, session: SessionKey = None) -> Actor:
    """The actor a write is made for, from the three headers a program sends: its name, and which of its agents
    and which conversation wrote (``X-Vaultsync-Agent``, ``X-Vaultsync-Session``), kept as git trailers."""
    return client(by, agent, session)


Writer = Annotated[Actor, depends_on(writer)]


class FactFields(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: Short | None = None
    timestamp: Short | None = None
    source: Short | None = None
    status: Short | None = None
    fields: dict[str, Any] | None = Field(None, description="any other keys of the fact, kept as given")

    def extra(self) -> dict[str, Any]:
        named = {k: v for k, v in self.model_dump(exclude={"fields", "entity", "fact", "by", "create"}).items()}
        return {**(self.fields or {}), **{k: v for k, v in named.items() if v is not None}}


class RememberBody(FactFields):
    entity: Short = Field(description="the entity's folder under life/, e.g. areas/people/sarah")
    fact: Text
    create: bool = Field(False, description="make the entity when it does not exist")


class SupersedeBody(FactFields):
    by: Short | None = Field(None, description="the id of an existing fact of the same entity that replaces it")
    fact: Text | None = Field(None, description="the text of a new fact that replaces it")


class Answered(Protocol):
    """``create_app``'s answer to a write: the written fact as JSON with its ETag, the recall cache made stale."""

    def __call__(self, done: Written, code: int = 200) -> Response: ...


READ = errors(401, 404, 409, 422)
WRITE = errors(401, 404, 409, 412, 413, 422, 503)
ETAG = {"ETag": {"description": "the fact's version; send it back as If-Match", "schema": {"type": "string"}}}
LOCATION = {"Location": {"description": "the new fact's URL", "schema": {"type": "string"}}}


def add(app: FastAPI, cfg: Config, events: Events, auth_dep: Sequence[Depends], answered: Answered) -> None:
    """Register the fact routes on ``app``, guarded by the same token as every other route."""
    deps = list(auth_dep)
    writes = [*deps, KEYED]  # a write takes an Idempotency-Key

    @app.get("/facts/{fact_id}", dependencies=deps, response_model=models.Fact, responses=_fact_read(), tags=["memory"])
    def get_fact(fact_id: FactId, entity: EntityQuery = None) -> Response:
        return _fact(read_fact(cfg, fact_id, entity))

    @app.post(
        "/facts",
        status_code=201,
        dependencies=writes,
        response_model=models.Written,
        responses={
            200: {"model": models.Written, "description": "the entity held the sentence already", "headers": ETAG},
            201: {"headers": {**ETAG, **LOCATION}},
            **errors(401, 404, 409, 413, 422, 503),
        },
        tags=["memory"],
    )
    def remember(by: Writer, body: RememberBody) -> Response:
        with events.pass_of("remember") as done:
            written = remember_fact(cfg, body.entity, body.fact, body.extra(), create=body.create, actor=by)
            response = answered(done(written), 200 if written.already else 201)
            if written.fact and not written.already:
                response.headers["Location"] = _location(written.fact.id, written.fact.entity)
            return response

    @app.post(
        "/facts/{fact_id}/supersede",
        dependencies=writes,
        response_model=models.Written,
        responses=_write(),
        tags=["memory"],
    )
    def supersede(
        by: Writer, fact_id: FactId, body: SupersedeBody, entity: EntityQuery = None, if_match: IfMatch = None
    ) -> Response:
        with events.pass_of("supersede") as done:
            written = supersede_fact(
                cfg,
                fact_id,
                by=body.by,
                fact=body.fact,
                fields=body.extra(),
                entity=entity,
                if_match=if_match,
                actor=by,
            )
            return answered(done(written))

    @app.delete(
        "/facts/{fact_id}", dependencies=writes, response_model=models.Written, responses=_forget(), tags=["memory"]
    )
    def forget(by: Writer, fact_id: FactId, entity: EntityQuery = None, if_match: IfMatch = None) -> Response:
        with events.pass_of("forget") as done:
            return answered(done(forget_fact(cfg, fact_id, entity=entity, if_match=if_match, actor=by)))

    @app.patch(
        "/facts/{fact_id}", dependencies=writes, response_model=models.Written, responses=_write(), tags=["memory"]
    )
    def patch_fact(
        by: Writer,
        fact_id: FactId,
        changes: Annotated[dict[str, Any], Body(description="fields to set; null removes a field")],
        entity: EntityQuery = None,
        if_match: IfMatch = None,
    ) -> Response:
        with events.pass_of("patch") as done:
            written = patch(cfg, fact_id, changes, entity=entity, if_match=if_match, actor=by)
            return answered(done(written))


def _fact_read() -> dict[int | str, dict[str, Any]]:
    return {200: {"headers": ETAG}, **READ}


def _write() -> dict[int | str, dict[str, Any]]:
    return {200: {"headers": ETAG}, **WRITE}


def _forget() -> dict[int | str, dict[str, Any]]:
    return errors(401, 404, 409, 412, 422, 503)


def _location(fact_id: str, entity: str) -> str:
    return f"/facts/{quote(fact_id, safe='')}?entity={quote(entity, safe='')}"


def _fact(view: Any) -> Response:
    return JSONResponse(view.to_json(), headers={"ETag": view.etag})
