"""Write an agent's ``items.json`` back with the smallest possible diff.

The edits are spliced into the original text (located by ``items.walk_list``), so indentation, escapes and inline
arrays stay as the author left them and ``git diff`` shows only the fact that changed; new text takes the file's
own line ending, indentation and escaping.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from vaultsync.memory.items import ItemsDoc, Located, describe_json_type, walk_list

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class SetFields:
    """Give fields of one fact new values; fields whose JSON is unchanged are left untouched."""

    index: int
    values: Mapping[str, Any]


@dataclass(frozen=True)
class RemoveFields:
    """Drop fields from one fact; naming a field the fact lacks is not an error, so retries are safe."""

    index: int
    keys: tuple[str, ...]


@dataclass(frozen=True)
class DeleteEntry:
    """Drop one fact; this wins over field edits to the same fact in the same call."""

    index: int


@dataclass(frozen=True)
class AppendEntry:
    """Add a fact after the last one."""

    value: dict[str, Any]


Edit: TypeAlias = SetFields | RemoveFields | DeleteEntry | AppendEntry


@dataclass(frozen=True)
class Style:
    """How new text must look to blend in with the file it is spliced into."""

    newline: str
    indent_unit: str
    ensure_ascii: bool


def apply_edits(doc: ItemsDoc, edits: Sequence[Edit]) -> bytes:
    """Return the file bytes with ``edits`` applied, touching as few characters as possible.

    Indexes refer to ``doc.entries``, so callers can plan edits from one parse without tracking how
    earlier edits shift later entries. Field edits and deletions are spliced into the original text in
    one pass; appends come after a re-walk because they must sit after whatever survived.
    """
    style = Style(doc.newline, doc.indent_unit, doc.ensure_ascii)
    deleted: set[int] = set()
    field_edits: dict[int, list[SetFields | RemoveFields]] = {}
    appended: list[dict[str, Any]] = []
    for edit in edits:
        if isinstance(edit, AppendEntry):
            appended.append(edit.value)
            continue
        if not 0 <= edit.index < len(doc.entries):
            raise IndexError(f"no entry {edit.index}: the list has {len(doc.entries)}")
        if isinstance(edit, DeleteEntry):
            deleted.add(edit.index)
        else:
            field_edits.setdefault(edit.index, []).append(edit)

    text = doc.text
    open_pos, close = doc.list_span
    spans = list(doc.spans)
    replacements: list[tuple[int, int, str]] = []
    for index, entry_edits in field_edits.items():
        if index in deleted:
            continue
        entry = doc.entries[index]
        if not isinstance(entry.value, dict):
            raise ValueError(f"entry {index} is {describe_json_type(entry.value)}, not an object with fields")
        start, end = spans[index]
        new_text = _edit_object(
            text[start:end],
            entry_edits,
            style,
            base_indent=_line_indent(text, start),
            multiline=_starts_line(text, start),
        )
        replacements.append((start, end, new_text))
    replacements.extend(_removal(text, open_pos, close, spans, run) for run in _runs(deleted))
    text = _splice(text, replacements)

    if appended:
        # Every edit above lies after the "[", so its offset is still valid in the new text.
        items, close = walk_list(text, open_pos)
        insertion = _insertion(
            text,
            open_pos,
            close,
            [(item.start, item.end) for item in items],
            blocks=[_dump(value, style.ensure_ascii, style.indent_unit) for value in appended],
            inlines=[_dump(value, style.ensure_ascii) for value in appended],
            style=style,
            base_indent=_line_indent(text, open_pos),
            multiline=True,
        )
        text = _splice(text, [insertion])
    return (codecs.BOM_UTF8 if doc.bom else b"") + text.encode("utf-8")


def new_items_file(records: Sequence[Mapping[str, Any]]) -> bytes:
    """Serialise a fresh fact file in the conventional layout, since there is no prior style to keep."""
    return (_dump([dict(record) for record in records], False, "  ") + "\n").encode("utf-8")


def _edit_object(
    text: str,
    edits: Sequence[SetFields | RemoveFields],
    style: Style,
    base_indent: str,
    multiline: bool,
) -> str:
    """Apply field edits to one object's text, re-walking it between edits so they can compound."""
    for edit in edits:
        members, close = walk_list(text, 0)
        if isinstance(edit, SetFields):
            replacements = _set_fields(text, members, close, edit.values, style, base_indent, multiline)
        else:
            doomed = {i for i, member in enumerate(members) if member.key in edit.keys}
            spans = [(member.start, member.end) for member in members]
            replacements = [_removal(text, 0, close, spans, run) for run in _runs(doomed)]
        text = _splice(text, replacements)
    return text


def _set_fields(
    text: str,
    members: list[Located],
    close: int,
    values: Mapping[str, Any],
    style: Style,
    base_indent: str,
    multiline: bool,
) -> list[tuple[int, int, str]]:
    """Replace existing values in place and gather new keys into one insertion after the last member."""
    # The last duplicate is the one json.loads keeps, so it is the one whose value must change.
    by_key = {member.key: member for member in members}
    replacements: list[tuple[int, int, str]] = []
    added: list[str] = []
    for key, value in values.items():
        member = by_key.get(key)
        if member is None:
            added.append(f"{_dump(key, style.ensure_ascii)}: {_dump(value, style.ensure_ascii)}")
        elif not _same_json(member.value, value):
            replacements.append((member.value_start, member.end, _dump(value, style.ensure_ascii)))
    if added:
        spans = [(member.start, member.end) for member in members]
        replacements.append(_insertion(text, 0, close, spans, added, added, style, base_indent, multiline))
    return replacements


def _same_json(old: Any, new: Any) -> bool:
    """Compare as serialised JSON because Python equality treats ``1``, ``1.0`` and ``true`` as equal."""
    return json.dumps(old) == json.dumps(new)


def _insertion(
    text: str,
    open_pos: int,
    close: int,
    spans: Sequence[tuple[int, int]],
    blocks: Sequence[str],
    inlines: Sequence[str],
    style: Style,
    base_indent: str,
    multiline: bool,
) -> tuple[int, int, str]:
    """Build the replacement that adds items after the last one, copying how the last one is laid out.

    ``blocks`` are the items rendered for their own lines (relative to column 0, ``\\n`` line breaks)
    and ``inlines`` the same items on one line. An empty container has no layout to copy, so it is
    opened up onto its own lines when ``multiline`` says its surroundings are laid out that way.
    """
    newline = style.newline
    if spans:
        last_start, last_end = spans[-1]
        indent = _line_indent(text, last_start)
        if _starts_line(text, last_start):
            # One item a line: a new one is one line too when the last is, as in a file of one-line objects.
            separator = "," + newline + indent
            one_line = "\n" not in text[last_start:last_end]
            pieces = list(inlines) if one_line else [_reindent(block, indent, newline) for block in blocks]
        elif "\n" in text[last_start:last_end]:
            # Hugging layout such as "}, {": keep hugging, but nest like the item before.
            separator = ", "
            pieces = [_reindent(block, indent, newline) for block in blocks]
        else:
            separator = ", "
            pieces = list(inlines)
        return last_end, last_end, "".join(separator + piece for piece in pieces)
    if multiline:
        inner = base_indent + style.indent_unit
        body = ("," + newline + inner).join(_reindent(block, inner, newline) for block in blocks)
        return open_pos + 1, close, newline + inner + body + newline + base_indent
    return open_pos + 1, close, ", ".join(inlines)


def _removal(
    text: str, open_pos: int, close: int, spans: Sequence[tuple[int, int]], run: tuple[int, int]
) -> tuple[int, int, str]:
    """Build the replacement that cuts items ``run[0]..run[1]`` plus exactly one adjacent comma.

    Which comma goes decides what the rest looks like: an item that begins its own line takes its
    trailing comma and the indentation of the next item, so the next item slides up into its place;
    an item sharing a line with its predecessor, or the last item, takes the comma before it, so no
    line is left with a dangling separator. Emptying the container collapses it to ``[]``/``{}``.
    """
    first, last = run
    if first == 0 and last == len(spans) - 1:
        return open_pos + 1, close, ""
    if last == len(spans) - 1:
        return spans[first - 1][1], spans[last][1], ""
    if first == 0 or "\n" in text[spans[first - 1][1] : spans[first][0]]:
        return spans[first][0], spans[last + 1][0], ""
    return spans[first - 1][1], spans[last][1], ""


def _runs(indexes: set[int]) -> list[tuple[int, int]]:
    """Group indexes into maximal consecutive runs.

    Cutting a run as one item keeps the cuts disjoint: cutting neighbours separately could have both
    claim the comma between them.
    """
    runs: list[tuple[int, int]] = []
    for index in sorted(indexes):
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs


def _splice(text: str, replacements: Sequence[tuple[int, int, str]]) -> str:
    """Apply non-overlapping ``(start, end, new)`` replacements given in original-text offsets.

    Building the result front to back from the untouched gaps is equivalent to applying replacements
    from the end backwards, but linear in the file size however many edits there are. Sorting on
    ``(start, end)`` puts an insertion at an item's end before a cut that starts there.
    """
    pieces: list[str] = []
    pos = 0
    for start, end, new in sorted(replacements, key=lambda r: (r[0], r[1])):
        pieces.append(text[pos:start])
        pieces.append(new)
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _line_start(text: str, pos: int) -> int:
    """Offset where the line holding ``pos`` begins; CRLF needs no special case as it ends in LF."""
    return text.rfind("\n", 0, pos) + 1


def _line_indent(text: str, pos: int) -> str:
    """The indentation of the line holding ``pos``, which new sibling lines must reproduce."""
    line = text[_line_start(text, pos) : pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _starts_line(text: str, pos: int) -> bool:
    """Whether only indentation precedes ``pos`` on its line, i.e. the item sits on its own line."""
    return not text[_line_start(text, pos) : pos].strip(" \t")


def _reindent(block: str, indent: str, newline: str) -> str:
    """Shift a column-0 block so its continuation lines sit under ``indent``.

    The first line is left alone because the caller has already placed it after the indentation.
    Splitting on ``\\n`` is safe as ``json.dumps`` escapes newlines inside strings.
    """
    return (newline + indent).join(block.split("\n"))


def _dump(value: Any, ensure_ascii: bool, indent: str | None = None) -> str:
    """Serialise like ``json.dumps`` but always to text that can be encoded as UTF-8.

    A lone surrogate (which a file may legally spell as ``\\ud800``) would be written raw when not
    escaping ASCII, and then fail to encode; escaping just those characters keeps the meaning.
    """
    dumped = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    if ensure_ascii:
        return dumped
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", dumped)
