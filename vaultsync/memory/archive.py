"""The janitor's archive of MEMORY.md sections, as bytes: pure, so what a run writes is decided before any write.

One file per month of archiving, ``memory/archive/MEMORY-YYYY-MM.md``. A run appends one block per section it
moves: a comment line saying when and from which lines, then the section's lines exactly as they were in
MEMORY.md (their own line endings too). Nothing earlier in the file is ever rewritten, so the archive reads as
a log and ``git diff`` of it shows only additions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from difflib import SequenceMatcher

from vaultsync.memory.sections import Section, split_lines

__all__ = [
    "ARCHIVE_DIR",
    "DAILY_ARCHIVE_DIR",
    "append_sections",
    "archive_name",
    "merge_daily",
    "newline_of",
    "without_sections",
]

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
    existing: bytes | None,
    lines: Sequence[bytes],
    moved: Sequence[Section],
    today: date,
    p1: int,
    p2: int,
    earlier: bytes | None = None,
) -> bytes:
    """The archive file after this run: ``existing`` untouched, then one block per moved section.

    A section an archive already holds as a block of its own, in ``existing`` or in ``earlier`` (last month's
    archive), is not appended again: a janitor killed after writing the archive and before rewriting MEMORY.md
    leaves the sections in both, and the next run only finishes taking them out of MEMORY.md."""
    nl = newline_of(lines)
    held = [a for a in (existing, earlier) if a]
    moved = [s for s in moved if not any(_holds_block(a, _body(lines, s, nl), nl) for a in held)]
    if not moved:
        return existing or b""
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


def _body(lines: Sequence[bytes], section: Section, nl: bytes) -> bytes:
    """The section's lines as a block of the archive holds them."""
    body = b"".join(lines[section.start : section.end])
    return body if body.endswith((b"\n", b"\r")) else body + nl


def _holds_block(archive: bytes, body: bytes, nl: bytes) -> bool:
    """Whether ``archive`` has a janitor block that is exactly ``body``: right after a janitor comment line, and
    followed by the next block's comment or the end of the file."""
    after = b" -->" + nl + body
    at = archive.find(after)
    while at != -1:
        line_start = archive.rfind(b"\n", 0, at) + 1
        rest = archive[at + len(after) :]
        if archive.startswith(b"<!-- janitor ", line_start) and (not rest or rest.startswith(nl + b"<!-- janitor ")):
            return True
        at = archive.find(after, at + 1)
    return False


def without_sections(lines: Sequence[bytes], moved: Sequence[Section]) -> bytes:
    """MEMORY.md with the moved sections' lines taken out and every other line as it was."""
    gone = {n for section in moved for n in range(section.start, section.end)}
    return b"".join(line for n, line in enumerate(lines) if n not in gone)


def merge_daily(archived: bytes, later: bytes, today: date) -> bytes:
    """The archived daily note once another version of it is archived too: nothing of either lost, nothing twice.

    A daily note the janitor archived can come back to ``memory/`` (a person's late edit in the vault beats the
    move, as an edit beats a delete). When one version holds every line of the other, in order, it is that
    one; otherwise the archived note keeps its text and gains, under a janitor comment, the lines only the
    later version has."""
    if archived == later:
        return archived
    old, new = split_lines(archived), split_lines(later)
    ops = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    if all(tag in ("equal", "insert") for tag, *_ in ops):
        return later
    if all(tag in ("equal", "delete") for tag, *_ in ops):
        return archived
    nl = newline_of(old or new)
    out = bytearray(archived)
    if not out.endswith((b"\n", b"\r")):
        out += nl
    out += nl + f"<!-- janitor {today.isoformat()}: lines of a later version of this note -->".encode() + nl
    for tag, _, _, j1, j2 in ops:
        if tag in ("insert", "replace"):
            out += b"".join(new[j1:j2])
    if not out.endswith((b"\n", b"\r")):
        out += nl
    return bytes(out)
