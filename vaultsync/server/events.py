"""Server-sent events for ``GET /events``: a pass started, a pass finished (with its summary), a run recorded.

Passes this server runs (``POST /sync`` and every write) are told as they start and end, and never again as
``run``. Passes other programs run (the CLI, cron, watch) are seen in the record of runs, which each subscriber
reads about once a second, and told as ``run`` events. Events go from the worker thread that ran the pass to
each subscriber's queue through its event loop, so a slow reader never holds a pass up. When the server stops,
every stream is told to end and ends at once with a last comment line, as a finished response, so nothing is
left for the server to cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from vaultsync.api import recent_runs, summary
from vaultsync.config import Config

POLL = 1.0  # seconds between looks at the record of runs
PING = 15  # polls between comment lines that keep proxies and clients from timing out
OWN_KEPT = 50  # this server's own run records remembered: as many as the record of runs keeps
CLOSE: tuple[str, dict[str, Any]] = ("close", {})  # put on each queue when the server stops; told by identity


class Events:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[tuple[str, dict[str, Any]]]]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._active = 0  # passes of this server under way: their run records are not yet told apart
        self._own: list[dict[str, Any]] = []  # run records this server's passes wrote, told as started/finished

    def publish(self, event: str, data: dict[str, Any]) -> None:
        """Tell every subscriber; safe from any thread."""
        self._put((event, data))

    def close(self) -> None:
        """End every open stream, and any opened from now on, at its next step; safe from any thread."""
        with self._lock:
            self._closed = True
        self._put(CLOSE)

    def _put(self, item: tuple[str, dict[str, Any]]) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for loop, queue in subscribers:
            with contextlib.suppress(RuntimeError):  # its loop has closed: the subscriber is leaving
                loop.call_soon_threadsafe(queue.put_nowait, item)

    @contextmanager
    def pass_of(self, kind: str) -> Iterator[Callable[[Any], Any]]:
        """``started`` now, ``finished`` when the block ends; the block hands its report (or a result holding
        one as ``.report``) to the function it is given, and ``finished`` carries its summary."""
        before = recent_runs(self.cfg)
        with self._lock:
            self._active += 1
        self.publish("started", {"kind": kind})
        outcome: dict[str, Any] = {"kind": kind}

        def done(result: Any) -> Any:
            report = getattr(result, "report", result)
            outcome.update(exit_code=int(report.exit_code), summary=summary(report), commits=report.commits)
            return result

        try:
            yield done
        except Exception as exc:
            outcome["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._note_own(before, outcome)
            self.publish("finished", outcome)

    def _note_own(self, before: list[dict[str, Any]], outcome: dict[str, Any]) -> None:
        """Remember the run record this pass wrote (new since it began, with its exit code and summary), so no
        stream tells it again as another program's ``run``; then let the streams look at the record again."""
        mine = [
            run
            for run in recent_runs(self.cfg)
            if run not in before
            and (run.get("exit_code"), run.get("summary")) == (outcome.get("exit_code"), outcome.get("summary"))
        ]
        with self._lock:
            self._own = [*self._own, *mine[-1:]][-OWN_KEPT:]
            self._active -= 1

    def _foreign(self, now: list[dict[str, Any]], known: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The runs other programs recorded since ``known``; None while a pass of this server is under way, whose
        own record is told apart only when it ends (so ``known`` stays as it was)."""
        with self._lock:
            if self._active:
                return None
            own = list(self._own)
        return [run for run in now if run not in known and run not in own]

    async def stream(self, limit: int | None = None) -> AsyncIterator[bytes]:
        """The event stream of one subscriber, ending after ``limit`` events when given."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        entry = (loop, queue)
        with self._lock:
            self._subscribers.add(entry)
            if self._closed:
                queue.put_nowait(CLOSE)
        try:
            yield b": connected\n\n"
            known = recent_runs(self.cfg)
            sent = idle = 0
            while limit is None or sent < limit:
                try:
                    item = await asyncio.wait_for(queue.get(), timeout=POLL)
                except TimeoutError:
                    now = recent_runs(self.cfg)
                    fresh = self._foreign(now, known)
                    if fresh is not None:
                        known = now
                    for run in (fresh or [])[: None if limit is None else limit - sent]:
                        yield _frame("run", run)
                        sent += 1
                    idle += 1
                    if idle % PING == 0:
                        yield b": ping\n\n"
                    continue
                if item is CLOSE:
                    yield b": server stopping\n\n"
                    return
                yield _frame(*item)
                sent += 1
        finally:
            with self._lock:
                self._subscribers.discard(entry)


def _frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
