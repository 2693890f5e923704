"""``Idempotency-Key`` on every write route: a request sent again with its key gets the first answer back.

A plugin or agent whose write timed out cannot tell whether it landed; sent again with the same key it is not
made twice, and the client reads what the first one did (docs/api.md, Idempotency). It is a layer in front of the
routes, not a part of any: it keeps the answer as it was sent (status, headers, body), so a route needs nothing
but the header's declaration (``KEYED``) for the document.

Only a caller with the token is served from the kept answers; any other request passes on to the routes, which
refuse it. Which answers are kept, and what makes two requests the same one, is ``app/answers.py``'s.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from typing import Annotated, Any

from fastapi import Depends, Header
from starlette.concurrency import run_in_threadpool

from vaultsync.api import Answer, Answers, VaultsyncError, fingerprint
from vaultsync.server.http_guard import RETRY_AFTER, error, token_matches

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
READS = frozenset({"GET", "HEAD", "OPTIONS"})
_CHARS = r"[!#-\[\]-~]{1,255}"  # visible ASCII but the quote and the backslash: a UUID, a ULID, base64
_KEY = re.compile(rf"{_CHARS}|\"{_CHARS}\"")
log = logging.getLogger("vaultsync.server")


def _declared(
    key: Annotated[
        str | None,
        Header(
            alias=HEADER,
            pattern=rf"^(?:{_CHARS}|\"{_CHARS}\")$",
            description="a key of the client's choosing (a UUID); the same request sent again with it gets the "
            "first answer, kept 24 hours; another request with it is refused (422)",
        ),
    ] = None,
) -> None:
    """The header as the document shows it; the layer below reads it before the route runs."""


KEYED = Depends(_declared)


def key_of(value: str | None) -> str | None:
    """The key a header value names (the quotes of the structured-field form taken off), or None when there is
    none or it is not a key: the route's own check then refuses it (422)."""
    if value is None or not _KEY.fullmatch(value.strip()):
        return None
    return value.strip().strip('"')


class Idempotency:
    """The ASGI layer: claim the key, answer a repeat from what was kept, keep the first answer."""

    def __init__(self, app: Any, answers: Answers, token: str) -> None:
        self.app, self.answers, self.token = app, answers, token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in READS:
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        key = key_of(headers.get(HEADER.lower()))
        if key is None or not self._authorized(headers.get("authorization", "")):
            return await self.app(scope, receive, send)
        messages = await _whole(receive)
        body = b"".join(m.get("body", b"") for m in messages)

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        path = scope.get("raw_path") or scope["path"].encode()
        request = fingerprint(scope["method"], path, scope.get("query_string", b""), body)
        try:
            kept = await run_in_threadpool(self.answers.claim, key, request)
        except VaultsyncError as exc:
            retry = {"Retry-After": RETRY_AFTER} if exc.retry else None
            return await error(exc.status, exc.detail(), retry)(scope, receive, send)
        except (sqlite3.Error, OSError, ValueError) as exc:  # answers cannot be kept or read: answer without them
            log.warning("Idempotency-Key not kept (%s: %s)", type(exc).__name__, exc)
            return await self.app(scope, replay, send)
        if kept is not None:
            return await _send(send, kept, replayed=True)
        await self._answer_once(key, scope, replay, send)

    async def _answer_once(self, key: str, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Run the route, keep its answer under ``key`` before it is sent (so a client that lost the connection
        finds it), and give up the claim when the answer is not to be kept or the route failed."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def held(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            await self.app(scope, receive, held)
        except BaseException:
            await run_in_threadpool(self.answers.drop, key)
            raise
        answer = Answer(
            int(start.get("status", 500)),
            [(k.decode("latin-1"), v.decode("latin-1")) for k, v in start.get("headers", [])],
            b"".join(chunks),
        )
        try:
            await run_in_threadpool(self.answers.settle, key, answer)
        except (sqlite3.Error, OSError) as exc:
            log.warning("Idempotency-Key answer not kept (%s: %s)", type(exc).__name__, exc)
        await _send(send, answer, replayed=False)

    def _authorized(self, header: str) -> bool:
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and token_matches(given.strip(), self.token)


async def _whole(receive: Any) -> list[dict[str, Any]]:
    """The request's body messages, all of them (the guard in front has capped its size)."""
    messages = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            return messages


async def _send(send: Any, answer: Answer, replayed: bool) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers]
    if replayed:
        headers.append((REPLAYED.lower().encode(), b"true"))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})
