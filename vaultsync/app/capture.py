"""Appending to today's daily note for a program: the raw timeline a plugin keeps of each conversation.

The three-layer memory keeps what happened in ``memory/YYYY-MM-DD.md`` as the agent writes it; ``extract`` and
the inbox later turn it into proposed facts. A plugin that captures a turn calls ``append_daily``, which works
like the other memory writes, through the one write path (``app/write.py``): it waits for the run lock, reads the
note under it, appends with a compare-and-swap (a line the agent wrote meanwhile is planned around, never
overwritten), and runs a pass naming the one file changed, so when it returns the note is in the vault,
committed as the capturing program (``vaultsync api (openclaw)``) and, with a ``[remote]``, pushed.

Only appending is offered: a program adds to the timeline, it never rewrites what the agent or the person wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vaultsync.app.memory import WAIT
from vaultsync.config import Config
from vaultsync.errors import FileChanged, Invalid, Stopped
from vaultsync.model import AGENT, Actor, Report
from vaultsync.system.fs import atomic_write, read_or_none
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["MAX_TEXT", "Captured", "append_daily"]

MAX_TEXT = 20_000
_TRIES = 20


@dataclass
class Captured:
    """Where the text went (workspace-relative) and the pass that carried it into the vault."""

    path: str
    heading: str
    report: Report

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "heading": self.heading,
            "synced": not self.report.stopped,
            "sync": {"exit_code": int(self.report.exit_code), "summary": self.report.summary()},
            "commits": self.report.commits,
        }


def append_daily(
    cfg: Config,
    text: str,
    *,
    source: str | None = None,
    now: datetime | None = None,
    wait: float = WAIT,
    actor: Actor = AGENT,
) -> Captured:
    """Append ``text`` under a ``## HH:MM`` heading (followed by ``source``, e.g. the plugin's name) to today's
    daily note, creating the note with a ``# YYYY-MM-DD`` title when it is the day's first entry."""
    body = _text(text)
    label = _source(source)
    when = now or datetime.now()
    day = when.date().isoformat()
    heading = f"## {when:%H:%M}" + (f" {label}" if label else "")
    if not cfg.workspace.is_dir() or not cfg.vault.is_dir():
        raise Stopped(f"missing the workspace or the vault folder; check the config ({cfg.source})")
    rel = f"memory/{day}.md"
    path = cfg.workspace / rel

    def apply() -> OwnWrites:
        path.parent.mkdir(exist_ok=True)
        for _ in range(_TRIES):
            raw = read_or_none(path)
            try:
                atomic_write(path, _appended(raw, day, heading, body), raw)
                break
            except FileChanged:
                continue
        else:
            raise FileChanged(f"{path}: rewritten by another program {_TRIES} times while appending")
        return OwnWrites(True, frozenset({f"workspace/{rel}"}))  # the pass stats the one file, not the memory

    key = f"workspace/{rel}"  # the agent's own lines already there are its commit, not the program's
    change = WriteRequest("capture", actor, apply=apply, wait=wait, recall=False, settle_first=frozenset({key}))
    report = write(cfg, change)
    return Captured(rel, heading, report)


def _appended(raw: bytes | None, day: str, heading: str, body: str) -> bytes:
    """The note with the entry at its end, a blank line between; the note's own line ending is kept."""
    old = (raw or b"").decode("utf-8", errors="surrogateescape")
    newline = "\r\n" if "\r\n" in old else "\n"
    start = old if old.strip() else f"# {day}{newline}"
    if not start.endswith(newline):
        start += newline
    entry = newline.join([heading, "", *body.splitlines()]) + newline
    return (start + newline + entry).encode("utf-8", errors="surrogateescape")


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid("text", "expected the text to append, not empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Invalid("text", "not valid Unicode text (a lone surrogate); send UTF-8") from None
    if len(value) > MAX_TEXT:
        raise Invalid("text", f"over {MAX_TEXT} characters; append a shorter entry")
    return value.strip()


def _source(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > 60 or any(c in value for c in "\r\n#"):
        raise Invalid("source", "expected a short name on one line, e.g. openclaw")
    return value.strip()
