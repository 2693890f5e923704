"""The routes the vault plugin needs beyond the memory API: open conflicts and their resolution, the inbox of
proposed facts and the latest review note.

They are the person's acts on the vault, kept apart from ``http.py``'s memory routes so each module stays about
one thing; they share its token check, its event feed and its recall cache, handed in by ``create_app``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Header, Path, Query
from fastapi.params import Depends
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from vaultsync.api import (
    Recaller,
    Written,
    decide_proposed,
    latest_review_note,
    open_conflicts,
    proposed_facts,
)
from vaultsync.api import resolve_conflict as resolve_copy
from vaultsync.config import Config
from vaultsync.server import models
from vaultsync.server.events import Events
from vaultsync.server.idempotency import KEYED
from vaultsync.server.models import errors

FactId = Annotated[str, Path(max_length=200, description="the fact's id, e.g. sarah-chen-004")]
EntityQuery = Annotated[str | None, Query(max_length=1_000, description="the entity, when the id is not unique")]
IfMatch = Annotated[str | None, Header(max_length=1_000, description="the ETag read with the fact; 412 if it changed")]


class ResolveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    copy_path: Annotated[str, Field(max_length=1_000)] = Field(
        alias="copy", description="the conflict copy's vault path, as GET /conflicts lists it"
    )
    keep: Literal["mine", "agent"] = Field(description="mine: the copy's version; agent: the note's version")


def add(
    app: FastAPI,
    cfg: Config,
    events: Events,
    recaller: Recaller,
    auth_dep: Sequence[Depends],
    answered: Callable[[Written], Response],
) -> None:
    """Register the plugin's routes on ``app``, guarded by the same token as every other route."""
    deps = list(auth_dep)
    writes = [*deps, KEYED]  # a write takes an Idempotency-Key

    @app.get(
        "/conflicts", dependencies=deps, response_model=models.ConflictList, responses=errors(401), tags=["plugin"]
    )
    def list_conflicts() -> dict[str, Any]:
        return {"conflicts": [c.to_json() for c in open_conflicts(cfg)]}

    @app.post(
        "/conflicts/resolve",
        dependencies=writes,
        response_model=models.Resolution,
        responses=errors(401, 404, 409, 413, 422, 503),
        tags=["plugin"],
    )
    def resolve_conflict(body: ResolveBody) -> dict[str, Any]:
        with events.pass_of("resolve") as done:
            resolved = done(resolve_copy(cfg, body.copy_path, body.keep))
        recaller.stale()
        return resolved.to_json()

    @app.get("/inbox", dependencies=deps, response_model=models.Inbox, responses=errors(401), tags=["plugin"])
    def list_inbox() -> dict[str, Any]:
        return {"facts": [f.to_json() for f in proposed_facts(cfg)]}

    @app.post(
        "/inbox/{fact_id}/{decision}",
        dependencies=writes,
        response_model=models.Written,
        responses=errors(401, 404, 409, 412, 422, 503),
        tags=["plugin"],
    )
    def decide(
        fact_id: FactId, decision: Literal["accept", "reject"], entity: EntityQuery = None, if_match: IfMatch = None
    ) -> Response:
        with events.pass_of(decision) as done:
            return answered(done(decide_proposed(cfg, fact_id, decision, entity=entity, if_match=if_match)))

    @app.get(
        "/review/latest", dependencies=deps, response_model=models.LatestReview, responses=errors(401), tags=["plugin"]
    )
    def latest_review() -> dict[str, Any]:
        return {"note": latest_review_note(cfg)}
