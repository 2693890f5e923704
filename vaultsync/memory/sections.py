"""MEMORY.md's sections and their priority tags (``## Title [P1] [2026-02-01]``), read with markdown-it-py.

A markdown parser, not a line scan, decides what a heading is: a ``## [P2]`` line inside a code fence or an HTML
comment is text, not a section. The module is pure: it takes the file's bytes and gives back line ranges, so
the janitor can move whole lines verbatim (CRLF and all) and no line is ever rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from markdown_it import MarkdownIt

__all__ = ["Section", "SectionsError", "due", "expired", "holds_p0", "parse_sections", "split_lines"]

# Tags sit at the end of a heading: "[P1] [2026-02-01]", "[P1][2026-02-01]", "[P1] 2026-02-01", "[P0]".
TAG = re.compile(r"\[P(?P<level>[0-9])\]\s*(?:\[(?P<boxed>[^\]]*)\]|(?P<bare>\d{4}-\d{1,2}-\d{1,2}))?\s*$")
DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*")
FENCE_CLOSE = re.compile(r"^\s*(`{3,}|~{3,})\s*$")


class SectionsError(ValueError):
    """MEMORY.md cannot be split safely; the message names the line, and nothing may be moved."""


@dataclass(frozen=True)
class Section:
    """One heading and the lines under it up to the next heading of the same or a higher level.

    ``start`` and ``end`` are 0-based line numbers, ``end`` exclusive, so ``lines[start:end]`` is the whole
    section: heading, its ``<!-- L0: ... -->`` comment and any sub-sections.
    """

    start: int
    end: int
    level: int  # 1 for "#", 2 for "##" ...
    title: str  # the heading's text without its tags
    priority: int | None  # 0, 1, 2 (or another digit, reported); None when untagged
    tagged_on: date | None
    date_problem: str  # why a tagged heading's date cannot be used ("" when it can, or none is needed)


def split_lines(raw: bytes) -> list[bytes]:
    """The file's lines with their own endings, split where markdown-it splits (``\\r\\n``, ``\\r``, ``\\n``)."""
    return raw.splitlines(keepends=True)


def parse_sections(raw: bytes) -> list[Section]:
    """Every heading of MEMORY.md as a section, in file order; raises ``SectionsError`` naming the line of
    anything that makes the split unsafe (text that is not UTF-8, a code fence that never closes)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SectionsError(f"line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x})") from None
    lines = split_lines(raw)
    tokens = MarkdownIt("commonmark").parse(text)
    heads: list[tuple[int, int, str]] = []
    for i, token in enumerate(tokens):
        if token.type == "fence" and token.map and not _closed(lines, token.map, token.markup):
            raise SectionsError(
                f"line {token.map[0] + 1}: a code fence ({token.markup}) that never closes; close it so the "
                "sections after it can be told from code"
            )
        if token.type == "heading_open" and token.map and token.level == 0:  # not one quoted or in a list
            heads.append((token.map[0], int(token.tag[1:]), tokens[i + 1].content))
    sections = []
    for n, (start, level, content) in enumerate(heads):
        end = next((s for s, lv, _ in heads[n + 1 :] if lv <= level), len(lines))
        sections.append(_section(start, end, level, content))
    return sections


def _closed(lines: Sequence[bytes], span: Sequence[int], markup: str) -> bool:
    """Whether a fence's last line closes it; markdown-it lets an unclosed fence run to the end of the file."""
    start, end = span
    if end - start < 2 or end > len(lines):
        return False
    closing = FENCE_CLOSE.match(lines[end - 1].decode("utf-8", "replace").rstrip("\r\n"))
    return bool(closing) and closing.group(1)[0] == markup[0] and len(closing.group(1)) >= len(markup)


def _section(start: int, end: int, level: int, content: str) -> Section:
    tag = TAG.search(content)
    if not tag:
        return Section(start, end, level, content.strip(), None, None, "")
    title = content[: tag.start()].strip()
    priority = int(tag.group("level"))
    written = tag.group("boxed") if tag.group("boxed") is not None else tag.group("bare")
    if priority == 0:
        return Section(start, end, level, title, 0, None, "")
    if priority > 2:
        return Section(start, end, level, title, priority, None, f"[P{priority}] is not a priority (P0, P1, P2)")
    if written is None:
        return Section(start, end, level, title, priority, None, f"[P{priority}] without a date [YYYY-MM-DD]")
    day = _date(written)
    if day is None:
        return Section(
            start, end, level, title, priority, None, f"[P{priority}] with {written!r}, not a YYYY-MM-DD date"
        )
    return Section(start, end, level, title, priority, day, "")


def _date(written: str) -> date | None:
    match = DATE.fullmatch(written)
    if not match:
        return None
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def expired(sections: Sequence[Section], today: date, p1_days: int, p2_days: int) -> list[Section]:
    """The outermost sections whose tag's date is older than its priority allows, in file order.

    A section inside one that expires moves with it; a section holding a ``[P0]`` sub-section stays, since P0
    is what the agent must never lose from MEMORY.md (the caller reports it).
    """
    out: list[Section] = []
    for section in sections:
        if out and section.start < out[-1].end:
            continue  # already inside a section that moves
        if due(section, today, p1_days, p2_days) and not holds_p0(sections, section):
            out.append(section)
    return out


def due(section: Section, today: date, p1_days: int, p2_days: int) -> bool:
    """Whether a section's tag says it is past its time (P1 after ``p1_days``, P2 after ``p2_days``)."""
    ages = {1: p1_days, 2: p2_days}
    if section.tagged_on is None or section.priority not in ages:
        return False
    return section.tagged_on + timedelta(days=ages[section.priority]) < today


def holds_p0(sections: Sequence[Section], section: Section) -> bool:
    """Whether a section has a ``[P0]`` sub-section (and so stays, whatever its own date says)."""
    return any(s.priority == 0 and section.start < s.start < section.end for s in sections)
