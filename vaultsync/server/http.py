"""``vaultsync serve``: the local HTTP API for plugins, a thin face over the public surface (``vaultsync.api``).

Each route checks what it is given, calls one use case and turns its result or its error into JSON and a status
code (from the one table of ``vaultsync/errors.py``); it holds no logic of its own, so the CLI, this API and the
MCP tools cannot behave differently. A route for another use case is a few lines: a function over the app call,
decorated with its path and ``dependencies=auth_dep``.

It is meant for one person's machine: it binds 127.0.0.1, wants the bearer token on every route but
``/health``, refuses a ``Host`` that is not a loopback name (a web page that rebinds its own domain to
127.0.0.1 would otherwise reach it), allows cross-origin calls only from Obsidian's app, and caps bodies
(``http_guard.py``). The routes over one fact are in ``fact_routes.py``, the plugins' in their own modules.
FastAPI and uvicorn are imported here, so only ``serve`` loads them.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import FastAPI, Path, Query
from fastapi.middleware.cors import CORSMiddleware
from fastapi.params import Depends
from fastapi.responses import JSONResponse, Response, StreamingResponse

from vaultsync import __version__
from vaultsync.api import (
    Answers,
    LockHeld,
    PassOptions,
    PortUnavailable,
    Recaller,
    RecallOptions,
    UsageError,
    Written,
    history,
    overview,
    parse_kinds,
    sync,
)
from vaultsync.api import get_entity as read_entity
from vaultsync.api import list_entities as entity_list
from vaultsync.config import Config
from vaultsync.server import fact_routes, models, plugin_routes, turn_routes
from vaultsync.server.events import Events
from vaultsync.server.fact_routes import WRITER_HEADERS
from vaultsync.server.http_guard import RETRY_AFTER, Guard, answer_errors, error, route_checks
from vaultsync.server.idempotency import HEADER as KEY_HEADER
from vaultsync.server.idempotency import KEYED, REPLAYED, Idempotency
from vaultsync.server.models import errors

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
OBSIDIAN_ORIGIN = "app://obsidian.md"
STOP_WAIT = 2  # seconds a stopping server waits for open requests before it ends them

Words = Annotated[str | None, Query(min_length=1, max_length=2_000, description="plain words; no search syntax")]
Day = Annotated[str | None, Query(max_length=100, description="a date, YYYY-MM-DD")]


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

    def answered(done: Written, code: int = 200) -> Response:
        recaller.stale()  # the next query sees this write
        return _written(done, code)

    auth_dep = route_checks(token)
    answer_errors(app)
    app.add_middleware(Idempotency, answers=Answers(cfg), token=token)  # next to the routes
    app.add_middleware(
        CORSMiddleware,
        allow_origins=[OBSIDIAN_ORIGIN],
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "If-Match", *WRITER_HEADERS, KEY_HEADER],
        expose_headers=["ETag", "Retry-After", REPLAYED],
    )
    app.add_middleware(Guard, hosts=hosts)  # added last, so it runs first

    _pass_routes(app, cfg, events, recaller, auth_dep)
    _entity_routes(app, cfg, auth_dep)
    fact_routes.add(app, cfg, events, auth_dep, answered)
    _lookup_routes(app, cfg, recaller, auth_dep)
    plugin_routes.add(app, cfg, events, recaller, auth_dep, answered)
    turn_routes.add(app, cfg, events, recaller, auth_dep)
    app.state.events = events
    return app


def _pass_routes(app: FastAPI, cfg: Config, events: Events, recaller: Recaller, auth_dep: Sequence[Depends]) -> None:
    """Health, status, a pass on demand and the stream of passes: what a plugin polls or follows."""

    @app.get("/health", response_model=models.Health, tags=["sync"])
    def health() -> dict[str, Any]:
        return {"ok": True, "version": __version__}

    @app.get("/status", dependencies=auth_dep, response_model=models.Status, responses=errors(401), tags=["sync"])
    def get_status() -> dict[str, Any]:
        return overview(cfg)

    @app.post(
        "/sync",
        dependencies=[*auth_dep, KEYED],
        response_model=models.Report,
        responses=errors(401, 409, 422),
        tags=["sync"],
    )
    def sync_now() -> Response:
        try:
            with events.pass_of("sync") as done:
                report = done(sync(cfg, PassOptions(), kind="api"))
            recaller.stale()
        except LockHeld:
            return error(409, "a pass is running; try again shortly", {"Retry-After": RETRY_AFTER})
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


def _entity_routes(app: FastAPI, cfg: Config, auth_dep: Sequence[Depends]) -> None:
    """The entities, and one with its facts."""

    @app.get(
        "/entities", dependencies=auth_dep, response_model=models.EntityList, responses=errors(401), tags=["memory"]
    )
    def list_entities() -> dict[str, Any]:
        return {"entities": [e.to_json() for e in entity_list(cfg)]}

    @app.get(
        "/entities/{entity:path}",
        dependencies=auth_dep,
        response_model=models.Entity,
        responses=errors(401, 404, 409, 422),
        tags=["memory"],
    )
    def get_entity(entity: Annotated[str, Path(max_length=1_000)]) -> dict[str, Any]:
        return read_entity(cfg, entity).to_json()


def _lookup_routes(app: FastAPI, cfg: Config, recaller: Recaller, auth_dep: Sequence[Depends]) -> None:
    """Searching the memory and reading its history: reads that never take the lock."""

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
        explain: Annotated[
            bool,
            Query(description="true: each hit says its bm25, its boosts and (semantic re-ranker on) its cosine"),
        ] = False,
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


def _written(written: Written, code: int = 200) -> Response:
    headers = {"ETag": written.fact.etag} if written.fact else {}
    return JSONResponse(written.to_json(), status_code=code, headers=headers)


def listen(host: str, port: int) -> socket.socket:
    """The listening socket ``serve`` answers on, bound before uvicorn starts so that a port in use is said in one
    line naming it and the fix, rather than as uvicorn's log line and its own exit code.

    Its connections send each write at once (``TCP_NODELAY``). uvicorn writes an answer's head and body in two
    sends; with Nagle's algorithm on, the body waits for the client's ACK of the head, which a client reusing its
    connection delays by 40 ms, on every answer. The option is set on the listening socket, which the accepted
    ones inherit, and the socket is made as a TCP one by name, which is what asyncio looks at before it sets the
    option on each connection itself.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name == "posix":  # a restart right after a stop finds the port in TIME_WAIT, not in use
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen()
    except OSError as exc:
        sock.close()
        raise PortUnavailable(
            f"cannot listen on {_url_host(host)}:{port} ({exc.strerror or exc}); stop the program using that port "
            "or choose another with --port"
        ) from None
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, which ends the open event streams first when it is asked to stop."""

    def __init__(self, config: uvicorn.Config, events: Events) -> None:
        super().__init__(config)
        self.events = events

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # A vault plugin is always subscribed: its stream would otherwise hold the stop for STOP_WAIT and then be
        # cancelled mid-await, which uvicorn reports as an exception in the application, with its traceback.
        self.events.close()
        await super().shutdown(sockets)


def serve(cfg: Config, token: str, host: str, port: int) -> None:
    """Run the API until interrupted (Ctrl-C or SIGTERM): open event streams end at once, other open requests get
    ``STOP_WAIT`` seconds."""
    sock = listen(host, port)
    app = create_app(cfg, token, LOOPBACK | {host})
    print(f"vaultsync: serving {cfg.vault} on http://{_url_host(host)}:{port}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=STOP_WAIT)
    with sock:
        _Server(config, app.state.events).run(sockets=[sock])


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
