"""``vaultsync serve``: the local HTTP API for plugins, a thin face over the public surface (``vaultsync.api``).

Each route checks what it is given, calls one use case and turns its result or its error into JSON and a status
code (from the one table of ``vaultsync/errors.py``); it holds no logic of its own, so the CLI, this API and the
MCP tools cannot behave differently. A route for another use case is a few lines: a function over the app call,
decorated with its path and ``dependencies=auth_dep``.

It is meant for one person's machine: it binds 127.0.0.1, wants the bearer token on every route but
``/health``, refuses a ``Host`` that is not a loopback name (a web page that rebinds its own domain to
127.0.0.1 would otherwise reach it), allows cross-origin calls only from Obsidian's app, and caps bodies.
FastAPI and uvicorn are imported here, so only ``serve`` loads them.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
import sys
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import Body, Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field

from vaultsync import __version__
from vaultsync.api import (
    LockHeld,
    PassOptions,
    Recaller,
    RecallOptions,
    UsageError,
    VaultsyncError,
    entities,
    history,
    memory,
    overview,
    parse_kinds,
    refused,
    sync,
)
from vaultsync.config import Config
from vaultsync.model import client
from vaultsync.server import models, plugin_routes, turn_routes
from vaultsync.server.events import Events
from vaultsync.server.models import errors

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
OBSIDIAN_ORIGIN = "app://obsidian.md"
MAX_BODY = 64 * 1024
RETRY_AFTER = "2"
CLIENT_HEADER = "X-Vaultsync-Client"
STOP_WAIT = 2  # seconds a stopping server waits for open requests before it ends them
log = logging.getLogger("vaultsync.server")

Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(HTTPBearer(auto_error=False))]
Text = Annotated[str, Field(min_length=1, max_length=20_000)]
Short = Annotated[str, Field(max_length=1_000)]
EntityQuery = Annotated[
    str | None,
    Query(max_length=1_000, description="the entity (areas/people/sarah or sarah), when the id is used by several"),
]
FactId = Annotated[str, Path(max_length=200, description="the fact's id, e.g. sarah-chen-004")]
IfMatch = Annotated[str | None, Header(max_length=1_000, description="the ETag read with the fact; 412 if it changed")]
Words = Annotated[str | None, Query(min_length=1, max_length=2_000, description="plain words; no search syntax")]
Day = Annotated[str | None, Query(max_length=100, description="a date, YYYY-MM-DD")]
Client = Annotated[
    str | None,
    Header(alias=CLIENT_HEADER, max_length=200, description="the program writing, named in git: vaultsync api (name)"),
]


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


READ = errors(401, 404, 409, 422)
WRITE = errors(401, 404, 409, 412, 413, 422, 503)
ETAG = {"ETag": {"description": "the fact's version; send it back as If-Match", "schema": {"type": "string"}}}
LOCATION = {"Location": {"description": "the new fact's URL", "schema": {"type": "string"}}}


class EventStream(StreamingResponse):
    media_type = "text/event-stream"


def create_app(cfg: Config, token: str, hosts: frozenset[str] = LOOPBACK) -> FastAPI:
    app = FastAPI(
        title="vaultsync",
        version=__version__,
        description="The local API of a vaultsync vault.",
        generate_unique_id_function=lambda route: route.name,  # operationIds a generated client keeps
    )
    events = Events(cfg)
    recaller = Recaller(cfg)  # one open index per worker thread, refreshed at most once a second

    def answered(done: memory.Written, code: int = 200) -> Response:
        recaller.stale()  # the next query sees this write
        return _written(done, code)

    def auth(credentials: Credentials) -> None:
        given = credentials.credentials.encode() if credentials else b""
        if not hmac.compare_digest(given, token.encode()):
            raise _Unauthorized

    auth_dep = [Depends(auth), Depends(_encodable_body)]
    app.add_exception_handler(VaultsyncError, _refused)
    app.add_exception_handler(
        _Unauthorized, lambda r, e: _error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
    )
    app.add_exception_handler(RequestValidationError, lambda r, e: _error(422, _plain(e.errors())))
    app.add_exception_handler(Exception, _last_resort)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=[OBSIDIAN_ORIGIN],
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "If-Match", CLIENT_HEADER],
        expose_headers=["ETag", "Retry-After"],
    )
    app.add_middleware(_Guard, hosts=hosts)  # added last, so it runs first

    @app.get("/health", response_model=models.Health, tags=["sync"])
    def health() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/status", dependencies=auth_dep, response_model=models.Status, responses=errors(401), tags=["sync"])
    def get_status() -> dict[str, Any]:
        return overview(cfg)

    @app.post("/sync", dependencies=auth_dep, response_model=models.Report, responses=errors(401, 409), tags=["sync"])
    def sync_now() -> Response:
        try:
            with events.pass_of("sync") as done:
                report = done(sync(cfg, PassOptions(), kind="api"))
            recaller.stale()
        except LockHeld:
            return _error(409, "a pass is running; try again shortly", {"Retry-After": RETRY_AFTER})
        return JSONResponse(report.to_json())

    @app.get(
        "/events",
        dependencies=auth_dep,
        response_class=EventStream,
        responses={
            200: {"content": {EventStream.media_type: {"schema": {"type": "string"}}}},
            **models.stream_errors(401, 422),
        },
        tags=["sync"],
    )
    async def events_stream(limit: Annotated[int | None, Query(ge=1, le=10_000)] = None) -> StreamingResponse:
        return EventStream(events.stream(limit))

    @app.get(
        "/entities", dependencies=auth_dep, response_model=models.EntityList, responses=errors(401), tags=["memory"]
    )
    def list_entities() -> dict[str, Any]:
        return {"entities": [e.to_json() for e in entities.list_entities(cfg)]}

    @app.get(
        "/entities/{entity:path}", dependencies=auth_dep, response_model=models.Entity, responses=READ, tags=["memory"]
    )
    def get_entity(entity: Annotated[str, Path(max_length=1_000)]) -> dict[str, Any]:
        return entities.get_entity(cfg, entity).to_json()

    @app.get(
        "/facts/{fact_id}", dependencies=auth_dep, response_model=models.Fact, responses=_fact_read(), tags=["memory"]
    )
    def get_fact(fact_id: FactId, entity: EntityQuery = None) -> Response:
        return _fact(entities.get_fact(cfg, fact_id, entity))

    @app.post(
        "/facts",
        status_code=201,
        dependencies=auth_dep,
        response_model=models.Written,
        responses={201: {"headers": {**ETAG, **LOCATION}}, **errors(401, 404, 409, 413, 422, 503)},
        tags=["memory"],
    )
    def remember(body: RememberBody, by: Client = None) -> Response:
        with events.pass_of("remember") as done:
            written = memory.remember(cfg, body.entity, body.fact, body.extra(), create=body.create, actor=client(by))
            response = answered(done(written), 201)
            if written.fact:
                response.headers["Location"] = _location(written.fact.id, written.fact.entity)
            return response

    @app.post(
        "/facts/{fact_id}/supersede",
        dependencies=auth_dep,
        response_model=models.Written,
        responses=_write(),
        tags=["memory"],
    )
    def supersede(
        fact_id: FactId, body: SupersedeBody, entity: EntityQuery = None, if_match: IfMatch = None, by: Client = None
    ) -> Response:
        with events.pass_of("supersede") as done:
            written = memory.supersede(
                cfg,
                fact_id,
                by=body.by,
                fact=body.fact,
                fields=body.extra(),
                entity=entity,
                if_match=if_match,
                actor=client(by),
            )
            return answered(done(written))

    @app.delete(
        "/facts/{fact_id}", dependencies=auth_dep, response_model=models.Written, responses=_forget(), tags=["memory"]
    )
    def forget(fact_id: FactId, entity: EntityQuery = None, if_match: IfMatch = None, by: Client = None) -> Response:
        with events.pass_of("forget") as done:
            return answered(done(memory.forget(cfg, fact_id, entity=entity, if_match=if_match, actor=client(by))))

    @app.patch(
        "/facts/{fact_id}", dependencies=auth_dep, response_model=models.Written, responses=_write(), tags=["memory"]
    )
    def patch_fact(
        fact_id: FactId,
        changes: Annotated[dict[str, Any], Body(description="fields to set; null removes a field")],
        entity: EntityQuery = None,
        if_match: IfMatch = None,
        by: Client = None,
    ) -> Response:
        with events.pass_of("patch") as done:
            written = memory.patch(cfg, fact_id, changes, entity=entity, if_match=if_match, actor=client(by))
            return answered(done(written))

    @app.get(
        "/recall", dependencies=auth_dep, response_model=models.HitList, responses=errors(401, 422), tags=["memory"]
    )
    def recall(
        q: Words = None,
        query: Words = None,
        limit: Annotated[int, Query(ge=1, le=1_000, description="at most this many hits")] = 10,
        kind: Annotated[
            str | None, Query(max_length=200, description="comma-separated: fact,summary,memory,daily")
        ] = None,
        entity: Annotated[
            str | None, Query(max_length=1_000, description="only this entity and those below it")
        ] = None,
        status: Annotated[Literal["active", "all"], Query(description="active: leave out superseded facts")] = "all",
        since: Day = None,
        until: Day = None,
        recency: Annotated[bool, Query(description="false: rank by relevance alone, not newer first")] = True,
        explain: Annotated[bool, Query(description="true: each hit says its bm25 and the boosts it got")] = False,
    ) -> dict[str, Any]:
        words = q if q is not None else query
        if words is None:
            raise UsageError("give the words to look for in q (or query)", "q")
        kinds = parse_kinds(kind)
        options = RecallOptions(limit, kinds, entity, status == "active", since, until, recency, explain=explain)
        return recaller(words, options).to_json()

    @app.get(
        "/history",
        dependencies=auth_dep,
        response_model=models.History,
        responses=errors(401, 404, 409, 422),
        tags=["memory"],
    )
    def get_history(
        target: Annotated[
            str | None, Query(max_length=1_000, description="an entity, a fact id or a note's path; none: everything")
        ] = None,
        since: Annotated[str | None, Query(max_length=100, description="a date, or git's '2 weeks ago'")] = None,
        limit: Annotated[int, Query(ge=1, le=1_000, description="at most this many changes")] = 50,
    ) -> dict[str, Any]:
        return history(cfg, target, since=since, limit=limit).to_json()

    plugin_routes.add(app, cfg, events, recaller, auth_dep, answered)
    turn_routes.add(app, cfg, events, recaller, auth_dep)
    app.state.events = events
    return app


class _Unauthorized(Exception):
    pass


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


def _written(written: memory.Written, code: int = 200) -> Response:
    headers = {"ETag": written.fact.etag} if written.fact else {}
    return JSONResponse(written.to_json(), status_code=code, headers=headers)


def _error(code: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
    """An error answer that can render whatever it quotes: a message may hold the client's own text, which may
    not be encodable (half of a surrogate pair), and rendering it must not turn a 4xx into a 500."""
    text = json.dumps({"detail": detail}, default=str, ensure_ascii=False, separators=(",", ":"))
    return Response(text.encode("utf-8", "replace"), status_code=code, headers=headers, media_type="application/json")


async def _encodable_body(request: Request) -> None:
    """Refuse a JSON body holding text that is not Unicode (a lone surrogate, as ``\\ud83d``: what a client
    sends after cutting an emoji in half) before any use case sees it: no file can hold it as UTF-8."""
    raw = await request.body()
    if not raw:
        return
    try:
        json.dumps(json.loads(raw), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise RequestValidationError([{"loc": ["body"], "msg": _SURROGATE, "type": "value_error"}]) from None
    except ValueError:
        return  # not JSON, or not UTF-8: the route's own parsing answers that


_SURROGATE = (
    "the body holds a lone UTF-16 surrogate (half of an emoji or other character cut in two); send whole characters"
)


def _refused(request: Request, exc: Exception) -> Response:
    """Every error of the family, from its one table (``vaultsync/errors.py``): its status, and a retry hint
    for what passes soon (a held lock, a missing root)."""
    assert isinstance(exc, VaultsyncError)
    return _error(exc.status, exc.detail(), {"Retry-After": RETRY_AFTER} if exc.retry else None)


def _plain(errors: Any) -> Any:
    """Validation errors as JSON: pydantic may put the offending value (bytes, an exception) in ``ctx``."""
    return json.loads(json.dumps(errors, default=str))


def _last_resort(request: Request, exc: Exception) -> Response:
    if why := refused(exc):  # a full or read-only disk: the person's to fix, not a fault of the server
        return _error(503, why)
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, f"internal error: {type(exc).__name__}; see the server's log")


class _Guard:
    """Refuse a Host that is not one of ours (DNS rebinding) and a body over ``MAX_BODY``, before routing."""

    def __init__(self, app: Any, hosts: frozenset[str]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = _hostname(headers.get("host", ""))
        if host not in self.hosts:
            return await _error(400, f"Host {host!r} is not served here")(scope, receive, send)
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            return await _error(413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
        # The body is read here, whole, before any route sees it: a body sent in chunks has no length to check
        # up front, and an error raised while FastAPI reads it would reach the client as its own 400.
        messages: list[dict[str, Any]] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                return await _error(413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


class PortUnavailable(Exception):
    """The address cannot be bound (in use, or not ours to take): a setting to change, not a crash."""


def serve(cfg: Config, token: str, host: str, port: int) -> None:
    """Run the API until interrupted.

    The socket is bound here, before uvicorn starts, so that a port in use is said in one line naming it and the
    fix, rather than as uvicorn's log line and its own exit code.
    """
    import uvicorn

    try:
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        raise PortUnavailable(
            f"cannot listen on {_url_host(host)}:{port} ({exc.strerror or exc}); stop the program using that port "
            "or choose another with --port"
        ) from None
    hosts = LOOPBACK | {host}
    print(f"vaultsync: serving {cfg.vault} on http://{_url_host(host)}:{port}", file=sys.stderr, flush=True)
    # An open event stream (a vault plugin is always subscribed) would hold a graceful shutdown for ever.
    config = uvicorn.Config(
        create_app(cfg, token, hosts), log_level="warning", access_log=False, timeout_graceful_shutdown=STOP_WAIT
    )
    with sock:
        uvicorn.Server(config).run(sockets=[sock])


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
