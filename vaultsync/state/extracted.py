"""Where ``vaultsync extract`` stopped in each daily note, so each run hands over only the text added since.

Per note the record keeps a byte offset and the SHA-256 of the bytes before it. A note that still starts with
those bytes has only grown, and its new text is what follows the offset; a note rewritten above the offset
(edited, shortened, replaced) no longer matches, and is handed over whole again: re-reading a note costs one
more model call, missing text would cost a fact. Only whole lines are handed over; a last line still being
written (no line ending yet) waits for the next run.

The record is written by the extraction's own write (``app/edits.py``), atomically and only once its facts
are, and losing it costs one extraction of everything again, never memory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

VERSION = 1


@dataclass(frozen=True)
class Mark:
    offset: int
    sha256: str  # of the note's first ``offset`` bytes


@dataclass(frozen=True)
class NewText:
    note: str  # workspace-relative, e.g. memory/2026-11-27.md
    first_line: int  # 1-based line number of the text's first line in the note
    text: str
    mark: Mark  # where the next run starts, once this text is handed in


def read_marks(raw: bytes | None) -> dict[str, Mark]:
    """The marks a record holds; an unreadable or foreign record counts as none (everything is new again)."""
    try:
        data = json.loads(raw or b"{}")
        notes = data.get("notes", {}) if data.get("version") == VERSION else {}
        return {
            note: Mark(int(v["offset"]), str(v["sha256"]))
            for note, v in notes.items()
            if isinstance(v, dict) and isinstance(v.get("offset"), int) and v["offset"] >= 0
        }
    except (ValueError, AttributeError, TypeError, KeyError):
        return {}


def dump_marks(marks: Mapping[str, Mark]) -> bytes:
    notes = {note: {"offset": m.offset, "sha256": m.sha256} for note, m in sorted(marks.items())}
    return (json.dumps({"version": VERSION, "notes": notes}, indent=2) + "\n").encode()


def new_text(note: str, raw: bytes, mark: Mark | None) -> NewText | None:
    """The whole lines of ``raw`` after ``mark`` (from the start when the note no longer begins as it did),
    or None when there are none."""
    start = 0
    if mark is not None and mark.offset <= len(raw) and _digest(raw[: mark.offset]) == mark.sha256:
        start = mark.offset
    end = raw.rfind(b"\n") + 1
    if end <= start:
        return None
    text = raw[start:end].decode("utf-8", "replace")
    return NewText(note, raw.count(b"\n", 0, start) + 1, text, Mark(end, _digest(raw[:end])))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
