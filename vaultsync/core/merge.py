"""Merging a unit both sides changed: records field by field, text line by line.

On a real conflict the memory side's value wins in the merged result and the caller keeps the vault's version
in a conflict copy, so the agent never reads conflict markers and the person sees both versions.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from vaultsync.core.decide import decide, decide_read_only
from vaultsync.core.units import World, same
from vaultsync.keys import ENTITY, FACT, FILE, mem_path_of
from vaultsync.model import READ_ONLY_FILES, EntityContent, Record, canonical

_MISSING = object()


def merge_records(base: Record | None, memory: Record, vault: Record) -> tuple[Record, str]:
    """Three-way merge per field; with no base, fields only one side has are simply taken."""
    base = base or {}
    merged: Record = {}
    clashes: list[str] = []
    keys = list(memory) + [k for k in vault if k not in memory]
    for key in keys:
        b = base.get(key, _MISSING)
        m = memory.get(key, _MISSING)
        v = vault.get(key, _MISSING)
        if _eq(m, v):
            value = m
        elif _eq(m, b):
            value = v
        elif _eq(v, b):
            value = m
        elif m is _MISSING or v is _MISSING:
            value = v if m is _MISSING else m  # an edit beats a deletion of the same field
        else:
            clashes.append(key)
            value = m
        if value is not _MISSING:
            merged[key] = value
    detail = f"both sides changed {', '.join(clashes)}" if clashes else ""
    return merged, detail


def _eq(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return canonical(a) == canonical(b)


def union_text(memory: str, vault: str) -> str:
    """Two new texts with no common ancestor: keep both, in order, each shared line once.

    This is what happens every morning the agent and Obsidian's Daily template both create today's note.
    """
    a = memory.splitlines(keepends=True)
    b = vault.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n"
    return "".join(_union(a, b))


def _union(a: list[str], b: list[str]) -> list[str]:
    """``a``'s lines in order, with ``b``'s lines that ``a`` lacks inserted where they occur; shared lines once."""
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        out += a[i1:i2]
        if op != "equal":
            out += b[j1:j2]
    return out


CLASH = "both sides changed the same lines"


def merge_text(base: str | None, memory: str, vault: str) -> tuple[str, str]:
    """Line-wise three-way merge; a union when there is no base.

    Each side is diffed against the base, and the two lists of changes are laid over the base together. Changes
    to different lines combine, adjacent ones included; two insertions at the same place are both kept, memory's
    lines first and a line both inserted once (the agent and the person both appending to today's note is the
    everyday case, not a clash; a line both hold is one a pass already carried, or both typed).
    Only changes touching the same base lines clash: then memory's text is returned whole, with the detail, and
    the caller keeps the vault's text in a conflict copy. Lines keep their own endings. Whether the text ends in
    a line break is merged like a line: the side that changed it wins, memory on a tie.
    """
    if base is None:
        return union_text(memory, vault), ""
    b, b_open = _lines(base)
    m, m_open = _lines(memory)
    v, v_open = _lines(vault)
    merged = _merge_lines(b, _hunks(b, m), _hunks(b, v))
    if merged is None:
        return memory, CLASH
    text = "".join(merged)
    if (v_open if m_open == b_open else m_open) and text.endswith("\n"):
        text = text.removesuffix("\r\n") if text.endswith("\r\n") else text.removesuffix("\n")
    return text, ""


@dataclass(frozen=True)
class _Hunk:
    """Base lines ``start:end`` replaced by ``lines`` (``start == end``: an insertion before line ``start``)."""

    start: int
    end: int
    lines: tuple[str, ...]


def _lines(text: str) -> tuple[list[str], bool]:
    r"""The text's lines, each with its own ending, and whether the last one had none.

    Only ``\n`` ends a line (a ``\r`` before it belongs to the ending). An unterminated last line gets the
    ending of the line before it, so appending after a note saved without a final line break (as Obsidian
    saves) is an insertion, not a change of that last line.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if not parts[-1]:
        return lines, False
    if parts[-1].endswith("\r"):
        return [*lines, parts[-1]], False
    ending = "\r\n" if lines and lines[-1].endswith("\r\n") else "\n"
    return [*lines, parts[-1] + ending], True


def _hunks(base: list[str], side: list[str]) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [_Hunk(i1, i2, tuple(side[j1:j2])) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]


def _clash(a: _Hunk, b: _Hunk) -> bool:
    """Whether two changes from different sides touch the same base lines.

    Ranges that share a line clash; an insertion clashes with a range only strictly inside it. Insertions at
    the same place, and changes that merely meet, do not.
    """
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return max(a.start, b.start) < min(a.end, b.end)


def _merge_lines(base: list[str], memory: list[_Hunk], vault: list[_Hunk]) -> list[str] | None:
    """Apply both sides' changes to ``base`` in base order; ``None`` when two of them clash.

    Each side's changes are sorted and separated by unchanged lines, so comparing the next change of each side
    is enough to find every clash.
    """
    out: list[str] = []
    pos = i = j = 0
    while i < len(memory) or j < len(vault):
        m = memory[i] if i < len(memory) else None
        v = vault[j] if j < len(vault) else None
        if m is None or v is None:
            step = m or v
            i, j = (i + 1, j) if m is not None else (i, j + 1)
        elif m == v:
            step = m
            i, j = i + 1, j + 1
        elif m.start == m.end == v.start == v.end:
            step = _Hunk(m.start, m.end, tuple(_union(list(m.lines), list(v.lines))))
            i, j = i + 1, j + 1
        elif _clash(m, v):
            return None
        elif (m.start, m.end) <= (v.start, v.end):
            step = m
            i += 1
        else:
            step = v
            j += 1
        assert step is not None
        out += base[pos : step.start]
        out += step.lines
        pos = step.end
    out += base[pos:]
    return out


def merge_entities(
    base: EntityContent | None, memory: EntityContent, vault: EntityContent
) -> tuple[EntityContent, str]:
    props, props_clash = merge_records(base.props if base else None, memory.props, vault.props)
    body, body_clash = merge_text(base.body if base else None, memory.body, vault.body)
    detail = "; ".join(d for d in (props_clash, body_clash) if d)
    if detail:
        return memory, detail
    return EntityContent(props, body), ""


def merge_files(base: bytes | None, memory: bytes, vault: bytes) -> tuple[bytes, str]:
    try:
        texts = [None if base is None else base.decode(), memory.decode(), vault.decode()]
    except UnicodeDecodeError:
        return memory, "both sides changed a file that is not text"
    merged, conflict = merge_text(*texts)  # type: ignore[arg-type]
    return merged.encode(), conflict


MERGERS = {FACT: merge_records, ENTITY: merge_entities}


def decide_all(world: World) -> None:
    for key, state in world.units.items():
        if state.kind == FILE and mem_path_of(key) in READ_ONLY_FILES:
            state.decision = decide_read_only(state.base, state.memory, state.vault)
            continue
        merger = MERGERS.get(state.kind, merge_files)
        state.decision = decide(state.base, state.memory, state.vault, same(state.kind), merger)
