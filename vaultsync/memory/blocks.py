"""Markdown cut into the pieces recall returns: sections of MEMORY.md and blocks of daily notes.

A hit is only useful when it points at the few lines that answer the question, so each piece carries its
1-based first and last line. The parsing is markdown-it-py's (CommonMark plus tables): hand-written line rules
break on fenced code, setext headings and lazy continuation lines, all of which occur in real daily notes.
markdown-it is imported here only, and only recall imports this module, so a sync pass never loads it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

DATE_TAG = re.compile(r"\[(\d{4}-\d{2}-\d{2})\]")
# A line's speaker, as chat logs and meeting notes write it: "- **Sam**: ...", "**Sam:** ...", "Sam: ...".
SPEAKER = re.compile(
    r"\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*([^*\n]{1,40}?)\s*(?::\*\*|\*\*\s*:)"
    "|([A-Z][\\w'\u2019.-]*(?: [A-Z][\\w'\u2019.-]*){0,2}):\\s)"
)
# Tokens whose ``map`` is one block a hit can point at; list items show up through their paragraphs.
BLOCK_TOKENS = frozenset({"paragraph_open", "fence", "code_block", "table_open", "html_block"})


@dataclass(frozen=True)
class Piece:
    """A run of lines of one file: its text, the heading above it (context for ranking) and a date tag if any."""

    first: int  # 1-based, inclusive
    last: int  # 1-based, inclusive
    text: str
    heading: str
    date: str | None


@functools.cache
def _parser() -> Any:
    """Block rules only: a piece needs its blocks' line maps and its headings' text as written, never the parsed
    inline markup (emphasis, links), whose parsing was a fifth of building the index."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def _heading_text(tokens: list[Any], i: int) -> str:
    inline = tokens[i + 1] if i + 1 < len(tokens) else None
    return inline.content.strip() if inline is not None and inline.type == "inline" else ""


def _lines_text(lines: list[str], first: int, last: int) -> str:
    return "\n".join(lines[first - 1 : last]).strip()


def sections(text: str) -> list[Piece]:
    """One piece per heading (down to the next heading of any level), plus the text before the first one.

    MEMORY.md and HEARTBEAT.md are written as short titled sections (``## Title [P1] [2026-02-01]``), and a
    section is the unit a person reads and the janitor archives; its date tag dates the piece.
    """
    lines = text.splitlines()
    tokens = _parser().parse(text)
    starts = [(t.map[0] + 1, _heading_text(tokens, i)) for i, t in enumerate(tokens) if t.type == "heading_open"]
    if not starts or starts[0][0] > 1:
        starts.insert(0, (1, ""))
    pieces = []
    for n, (first, heading) in enumerate(starts):
        last = starts[n + 1][0] - 1 if n + 1 < len(starts) else len(lines)
        while last > first and not lines[last - 1].strip():
            last -= 1
        body = _lines_text(lines, first, last)
        if body:
            tag = DATE_TAG.search(heading)
            pieces.append(Piece(first, last, body, heading, tag.group(1) if tag else None))
    return pieces


def blocks(text: str) -> list[Piece]:
    """One piece per paragraph, list item's paragraph, code block or table, with the nearest heading above it.

    A daily note is mostly one bullet per event: the bullet, not the day, is what answers "when did Sarah say
    the readout moved". Headings are not pieces of their own; they travel with each block as context.
    """
    lines = text.splitlines()
    tokens = _parser().parse(text)
    heading = ""
    pieces = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = _heading_text(tokens, i)
        elif token.type in BLOCK_TOKENS and token.map:
            first, last = token.map[0] + 1, token.map[1]
            body = _lines_text(lines, first, last)
            if body:
                tag = DATE_TAG.search(body)
                pieces.append(Piece(first, last, body, heading, tag.group(1) if tag else None))
    return pieces


def speaker(text: str) -> str | None:
    """The label a piece's first line opens with (``**Sam**:``), lower case: who said or wrote it."""
    m = SPEAKER.match(text)
    label = (m.group(1) or m.group(2)).strip().lower() if m else ""
    return label or None
