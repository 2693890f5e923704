"""The janitor's archive of MEMORY.md sections, as bytes: pure, so what a run writes is decided before any write.

One file per month of archiving, ``memory/archive/MEMORY-YYYY-MM.md``. A run appends one block per section it
moves: a comment line saying when and from which lines, then the section's lines exactly as they were in
MEMORY.md (their own line endings too). Nothing earlier in the file is ever rewritten, so the archive reads as
a log and ``git diff`` of it shows only additions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from vaultsync.memory.sections import Section

__all__ = ["ARCHIVE_DIR", "DAILY_ARCHIVE_DIR", "append_sections", "archive_name", "newline_of", "without_sections"]

ARCHIVE_DIR = "memory/archive"  # under the workspace
DAILY_ARCHIVE_DIR = "memory/archive/daily"


def archive_name(today: date) -> str:
    """The archive file a run on ``today`` appends to."""
    return f"MEMORY-{today:%Y-%m}.md"


def newline_of(lines: Sequence[bytes]) -> bytes:
    """The file's own line ending (its first line's), for the lines the archive adds around verbatim ones."""
    for line in lines:
        if line.endswith(b"\r\n"):
            return b"\r\n"
        if line.endswith((b"\n", b"\r")):
            return line[-1:]
    return b"\n"


def append_sections(
    existing: bytes | None, lines: Sequence[bytes], moved: Sequence[Section], today: date, p1: int, p2: int
) -> bytes:
    """The archive file after this run: ``existing`` untouched, then one block per moved section."""
    nl = newline_of(lines)
    out = bytearray(existing or b"")
    if not out:
        out += b"# MEMORY.md archive " + f"{today:%Y-%m}".encode() + nl + nl
        out += b"Sections vaultsync janitor moved out of MEMORY.md, oldest run first, each exactly as it was." + nl
    elif not out.endswith((b"\n", b"\r")):
        out += nl
    for section in moved:
        age = {1: p1, 2: p2}.get(section.priority or 0, 0)
        when = section.tagged_on.isoformat() if section.tagged_on else "?"
        note = (
            f"<!-- janitor {today.isoformat()}: MEMORY.md lines {section.start + 1}-{section.end}, "
            f"[P{section.priority}] {when}, older than {age} days -->"
        )
        out += nl + note.encode("utf-8") + nl
        for line in lines[section.start : section.end]:
            out += line
        if not out.endswith((b"\n", b"\r")):
            out += nl  # MEMORY.md's last line had no ending; the next block must start on its own line
    return bytes(out)


def without_sections(lines: Sequence[bytes], moved: Sequence[Section]) -> bytes:
    """MEMORY.md with the moved sections' lines taken out and every other line as it was."""
    gone = {n for section in moved for n in range(section.start, section.end)}
    return b"".join(line for n, line in enumerate(lines) if n not in gone)
