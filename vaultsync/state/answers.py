"""The file of the HTTP API's first answer to each ``Idempotency-Key``, kept a day: ``.vaultsync/answers.sqlite``
(what is kept, and what makes two requests one, is ``app/answers.py``'s).

Each key is claimed before its request is answered (a repeat meanwhile is told to wait: ``KeyPending``), its
answer is kept once made, and a key sent again with another request is refused (``KeyReused``). The claim is
one transaction, so two copies of a request sent at once, to one server or to two over the same vault, are
answered once. Answers older than ``KEEP`` are dropped as keys are claimed; a claim that never got its answer
(the server stopped while answering) is given up after ``ABANDONED``.

Like everything in the state folder, the file can be deleted; the keys it held are then new again, and the
write rules of the use cases (a remembered sentence is answered with the fact holding it) still hold.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vaultsync.errors import KeyPending, KeyReused
from vaultsync.state.files import StateFiles

KEEP = 24 * 3600.0  # seconds an answer is kept
ABANDONED = 600.0  # seconds after which a claim without an answer is given up: longer than any write waits

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY, request TEXT NOT NULL, at REAL NOT NULL, status INTEGER, headers TEXT, body BLOB
);
CREATE INDEX IF NOT EXISTS answers_at ON answers (at);
"""


Kept = tuple[int, list[tuple[str, str]], bytes]  # an answer as it was sent: status, headers (as text), body


class AnswerStore:
    """The answers of one vault's state folder; each call opens the file, so any thread may use it."""

    def __init__(self, state_dir: Path) -> None:
        self.path = StateFiles(state_dir).answers

    def claim(self, key: str, request: str, now: float | None = None) -> Kept | None:
        """The answer kept for ``key``, or None once the key is claimed for ``request`` (a fingerprint of the
        request). Raises ``KeyReused`` when the key came with another request, ``KeyPending`` when
        its first request is still being answered."""
        now = time.time() if now is None else now
        with self._db() as db:
            db.execute("DELETE FROM answers WHERE at < ? OR (status IS NULL AND at < ?)", (now - KEEP, now - ABANDONED))
            row = db.execute("SELECT request, status, headers, body FROM answers WHERE key = ?", (key,)).fetchone()
            if row is None:
                db.execute("INSERT INTO answers (key, request, at) VALUES (?, ?, ?)", (key, request, now))
                return None
        asked, status, headers, body = row
        if asked != request:
            raise KeyReused(key)
        if status is None:
            raise KeyPending(key)
        return int(status), [(str(k), str(v)) for k, v in json.loads(headers)], bytes(body)

    def keep(self, key: str, answer: Kept) -> None:
        """The claimed key's answer, kept for its repeats."""
        status, headers, body = answer
        with self._db() as db:
            db.execute(
                "UPDATE answers SET status = ?, headers = ?, body = ? WHERE key = ?",
                (status, json.dumps(headers), body, key),
            )

    def drop(self, key: str) -> None:
        """Give up a claim whose answer is not kept: the repeat is answered afresh."""
        with self._db() as db:
            db.execute("DELETE FROM answers WHERE key = ? AND status IS NULL", (key,))

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            db.executescript(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()
