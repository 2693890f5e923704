"""A write's first answer, kept for the requests that repeat it with the same ``Idempotency-Key``.

A client whose write timed out cannot tell whether it landed. Sent again with its key, the request is not made
twice: the client gets the first answer, as it was sent (docs/api.md, Idempotency). This module says what makes
two requests the same one (``fingerprint``) and which answers are kept (``settle``); the file they are kept in,
and for how long, is ``state/answers.py``'s.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from vaultsync.config import Config
from vaultsync.state.answers import AnswerStore

__all__ = ["Answer", "Answers", "fingerprint"]


@dataclass(frozen=True)
class Answer:
    """An answer as it was sent: its status, its headers (names and values as text) and its body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def kept(self) -> bool:
        """Whether a repeat gets this answer: not when it asks to try again (a 5xx, or any answer with
        ``Retry-After``: a pass held the lock, a root was missing), since the repeat may then succeed."""
        return self.status < 500 and not any(name.lower() == "retry-after" for name, _ in self.headers)


def fingerprint(method: str, path: bytes, query: bytes, body: bytes) -> str:
    """What makes two requests the same one: the method, the path and query, and the body (a JSON body as its
    value, so a client sending its keys in another order or spacing sends the same request)."""
    try:
        shown = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    except (ValueError, RecursionError):  # not JSON, or nested past what the decoder follows: the bytes
        shown = body
    return hashlib.sha256(b"\0".join([method.encode(), path, query, shown])).hexdigest()


class Answers:
    """The kept answers of one vault."""

    def __init__(self, cfg: Config) -> None:
        self.store = AnswerStore(cfg.state_dir)

    def claim(self, key: str, request: str) -> Answer | None:
        """The first answer to ``key``'s request, or None once the key is claimed for ``request`` (a
        ``fingerprint``). Raises ``KeyReused`` (another request), ``KeyPending`` (not answered yet)."""
        kept = self.store.claim(key, request)
        return Answer(*kept) if kept is not None else None

    def settle(self, key: str, answer: Answer) -> None:
        """Keep the claimed key's answer, or give the claim up when it is not to be kept."""
        if answer.kept:
            self.store.keep(key, (answer.status, answer.headers, answer.body))
        else:
            self.store.drop(key)

    def drop(self, key: str) -> None:
        """Give the claim up: the request failed before it was answered, and its repeat is made afresh."""
        self.store.drop(key)
