"""OpenClaw's machine markers in markdown: HTML comments its memory plugins write and read back, which a rewrite
of a file must keep exactly as they are, each on its own line.

Lines: ``<!-- openclaw-memory-lineage:… -->`` and ``<!-- openclaw-memory-promotion:… -->`` above a promoted
entry, the entry's own ``<!-- trigger: … -->``, ``<!-- importance: N -->`` and ``<!-- project: … -->``, and
USER.md's ``<!-- observed: … | status: … -->``. Blocks: dreaming's ``<!-- openclaw:dreaming:<phase>:start -->``
… ``:end -->`` and memory-wiki's ``<!-- openclaw:human:start -->`` … ``<!-- openclaw:human:end -->``, whose
inside is text a person or dreaming owns.
"""

from __future__ import annotations

import re

__all__ = ["dropped", "marked"]

MARKED_LINE = re.compile(
    r"<!--\s*(?:openclaw-memory-(?:lineage|promotion):|trigger:|importance:\s*\d+\s*-->|project:|observed:)"
)
BLOCK_START = re.compile(r"^\s*<!--\s*openclaw:(dreaming:[a-z][a-z0-9-]*|human):start\s*-->\s*$")


def marked(text: str) -> list[str]:
    """Every marked line and every marked block (start line to end line) of ``text``, in order, verbatim."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        start = BLOCK_START.match(lines[i])
        if start:
            end = re.compile(rf"^\s*<!--\s*openclaw:{re.escape(start.group(1))}:end\s*-->\s*$")
            j = next((k for k in range(i + 1, len(lines)) if end.match(lines[k])), None)
            if j is not None:
                out.append("".join(lines[i : j + 1]))
                i = j + 1
                continue
        if MARKED_LINE.search(lines[i]):
            out.append(lines[i])
        i += 1
    return out


def dropped(old: str, new: str) -> list[str]:
    """The marked lines and blocks of ``old`` that ``new`` no longer holds verbatim (a block's inside included)."""
    kept = new.replace("\r\n", "\n")
    return [m for m in marked(old) if m.replace("\r\n", "\n").rstrip("\n") not in kept]
