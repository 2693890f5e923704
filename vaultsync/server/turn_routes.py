"""The routes an agent's memory plugin calls around each turn: what to know before it (``GET /context``) and the
turn appended to today's daily note after it (``POST /daily``).

Kept apart from the fact routes (``fact_routes.py``) so each module stays about one thing; they share
``http.py``'s token check, its event feed and its recall cache, handed in by ``create_app``. The caller may name
itself in ``X-Vaultsync-Client`` (the OpenClaw plugin sends ``openclaw``): the daily entry's heading then says who
wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query
from fastapi.params import Depends
from pydantic import BaseModel, ConfigDict, Field

from vaultsync.api import BUDGET, Recaller, append_daily, context
from vaultsync.config import Config
from vaultsync.model import client as actor
from vaultsync.server import models
from vaultsync.server.events import Events
from vaultsync.server.fact_routes import CLIENT_HEADER, AgentId, SessionKey
from vaultsync.server.idempotency import KEYED
from vaultsync.server.models import errors

Client = Annotated[
    str | None, Header(alias=CLIENT_HEADER, max_length=60, description="the calling program, e.g. openclaw")
]


class DailyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=20_000, description="what to append, as the agent would write it")
    source: str | None = Field(None, max_length=60, description="who wrote it, in the entry's heading")


def add(app: FastAPI, cfg: Config, events: Events, recaller: Recaller, auth_dep: Sequence[Depends]) -> None:
    """Register the two routes on ``app``, guarded by the same token as every other route."""
    deps = list(auth_dep)
    writes = [*deps, KEYED]  # a write takes an Idempotency-Key

    @app.get("/context", dependencies=deps, response_model=models.Context, responses=errors(401, 422), tags=["memory"])
    def context_route(
        q: Annotated[str, Query(min_length=1, max_length=20_000, description="the person's message")],
        budget: Annotated[int, Query(ge=100, le=50_000, description="at most this many characters of text")] = BUDGET,
        min_score: Annotated[
            float, Query(ge=0, le=1_000_000, description="leave out related memories scoring below this")
        ] = 0.0,
    ) -> dict[str, Any]:
        return context(cfg, q, budget, recaller, min_score).to_json()

    @app.post(
        "/daily",
        status_code=201,
        dependencies=writes,
        response_model=models.Captured,
        responses=errors(401, 409, 422, 503),
        tags=["memory"],
    )
    def daily(
        body: DailyBody, client: Client = None, agent: AgentId = None, session: SessionKey = None
    ) -> dict[str, Any]:
        with events.pass_of("capture") as done:
            by = actor(client, agent, session)  # git names the program: vaultsync api (openclaw), Agent: main
            captured = done(append_daily(cfg, body.text, source=body.source or client, actor=by))
        recaller.stale()
        return captured.to_json()
