"""What stands between a client and the HTTP API's routes: the Host and body-size guard, the bearer token, the
body's Unicode check, and how every refusal is answered.

It is its own module because none of it is about any one route: each route is a few lines over a use case, and
this is the one place that decides who may ask, what they may send, and that nothing a client sends turns into a
500 (a message quoting the client's own text included).
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request, params
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from vaultsync.api import VaultsyncError, refused

MAX_BODY = 64 * 1024
RETRY_AFTER = "2"
log = logging.getLogger("vaultsync.server")

Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(HTTPBearer(auto_error=False))]


def route_checks(token: str) -> list[params.Depends]:
    """The dependencies of every route but ``/health``: the bearer token, then a body that is whole Unicode."""

    def auth(credentials: Credentials) -> None:
        if not token_matches(credentials.credentials if credentials else "", token):
            raise _Unauthorized

    return [Depends(auth), Depends(_encodable_body)]


def token_matches(given: str, token: str) -> bool:
    """The bearer token's one check, in constant time, for the routes and for the layer keeping answers."""
    return hmac.compare_digest(given.encode(), token.encode())


def answer_errors(app: FastAPI) -> None:
    """Answer every refusal as ``{"detail": ...}`` with its status, and anything unforeseen as one logged 500."""
    app.add_exception_handler(VaultsyncError, _refused)
    app.add_exception_handler(
        _Unauthorized, lambda r, e: error(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
    )
    app.add_exception_handler(RequestValidationError, lambda r, e: error(422, _plain(e.errors())))
    app.add_exception_handler(Exception, _last_resort)


class _Unauthorized(Exception):
    pass


def error(code: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
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
    return error(exc.status, exc.detail(), {"Retry-After": RETRY_AFTER} if exc.retry else None)


def _plain(errors: Any) -> Any:
    """Validation errors as JSON: pydantic may put the offending value (bytes, an exception) in ``ctx``."""
    return json.loads(json.dumps(errors, default=str))


def _last_resort(request: Request, exc: Exception) -> Response:
    if why := refused(exc):  # a full or read-only disk: the person's to fix, not a fault of the server
        return error(503, why)
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return error(500, f"internal error: {type(exc).__name__}; see the server's log")


class Guard:
    """Refuse a Host that is not one of ours (DNS rebinding) and a body over ``MAX_BODY``, before routing."""

    def __init__(self, app: Any, hosts: frozenset[str]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = _hostname(headers.get("host", ""))
        if host not in self.hosts:
            return await error(400, f"Host {host!r} is not served here")(scope, receive, send)
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_BODY:
            return await error(413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
        # The body is read here, whole, before any route sees it: a body sent in chunks has no length to check
        # up front, and an error raised while FastAPI reads it would reach the client as its own 400.
        messages: list[dict[str, Any]] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                return await error(413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host
