"""Reading the agent's workspace files for the faces: a daily note, and MEMORY.md split into its sections.

Reads take no lock and read the files as they are now, like ``app/entities.py``. A day or a section is named by
a client, so the day is checked to be a real date before it becomes a file name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.errors import Invalid, NotFound
from vaultsync.memory.sections import SectionsError, parse_sections, split_lines
from vaultsync.system.fs import read_or_none

__all__ = [
    "MEMORY",
    "DailyNote",
    "MemorySection",
    "check_day",
    "daily_note",
    "daily_path",
    "memory_sections",
    "memory_text",
]

MEMORY = "MEMORY.md"


@dataclass(frozen=True)
class DailyNote:
    day: str
    path: str  # workspace-relative
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"day": self.day, "path": self.path, "text": self.text}


@dataclass(frozen=True)
class MemorySection:
    title: str
    level: int
    priority: int | None
    tagged_on: str | None
    text: str  # the whole section: heading, body and sub-sections

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "level": self.level,
            "priority": self.priority,
            "tagged_on": self.tagged_on,
            "text": self.text,
        }


def check_day(day: str | None, today: date | None = None) -> str:
    """``YYYY-MM-DD`` of a real date; none (or ``today``) means today."""
    if day is None or day == "today":
        return (today or date.today()).isoformat()
    try:
        parsed = date.fromisoformat(day) if len(day) == 10 else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise Invalid("day", f"{day!r} is not a date; expected YYYY-MM-DD or today")
    return parsed.isoformat()


def daily_path(cfg: Config, day: str | None = None) -> Path:
    return cfg.workspace / "memory" / f"{check_day(day)}.md"


def daily_note(cfg: Config, day: str | None = None) -> DailyNote:
    """The daily note of ``day`` (default today): ``memory/YYYY-MM-DD.md`` in the workspace."""
    name = check_day(day)
    rel = f"memory/{name}.md"
    raw = read_or_none(daily_path(cfg, name))
    if raw is None:
        raise NotFound(f"no daily note for {name} ({rel})")
    return DailyNote(name, rel, raw.decode("utf-8", "replace"))


def memory_text(cfg: Config) -> str:
    return _memory(cfg).decode("utf-8", "replace")


def _memory(cfg: Config) -> bytes:
    raw = read_or_none(cfg.workspace / MEMORY)
    if raw is None:
        raise NotFound(f"no {MEMORY} in the workspace ({cfg.workspace})")
    return raw


def memory_sections(cfg: Config, title: str | None = None) -> list[MemorySection]:
    """MEMORY.md's sections in file order; ``title`` keeps those whose title holds it (any case)."""
    raw = _memory(cfg)
    try:
        sections = parse_sections(raw)
    except SectionsError as exc:
        raise Invalid("MEMORY.md", f"{cfg.workspace / MEMORY}: {exc}") from None
    lines = split_lines(raw)
    wanted = title.casefold() if title else None
    found = [
        MemorySection(
            s.title,
            s.level,
            s.priority,
            s.tagged_on.isoformat() if s.tagged_on else None,
            b"".join(lines[s.start : s.end]).decode("utf-8", "replace"),
        )
        for s in sections
        if wanted is None or wanted in s.title.casefold()
    ]
    if title and not found:
        names = ", ".join(s.title for s in sections if s.level <= 2) or "none"
        raise NotFound(f"no section of {MEMORY} has {title!r} in its title; sections: {names}")
    return found
