"""Read an agent's ``items.json`` fact file, and locate each fact in its text for ``items_edit``.

Both the agent and people edit these files by hand, and every change vaultsync makes lands in git, so a
write-back splices characters into the original text instead of re-serialising it (``items_edit.py``); this
module finds where each fact sits. The stdlib ``json`` module stays the single source of truth for what the
text means: every value is located with ``JSONDecoder.raw_decode``, and only the punctuation between values is
walked by hand. Reading a file needs only its values (every pass reads some, a first import all of them), so
the walk and the file's style are worked out when an edit first asks.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

_DECODER = json.JSONDecoder()
_JSON_WHITESPACE = " \t\r\n"
# Deeper than any fact an agent writes, shallow enough that every recursive reader and writer after the
# parse stays far from the interpreter's recursion limit.
MAX_DEPTH = 100
_NON_WHITESPACE = re.compile(r"[^ \t\r\n]")
_LEADING_INDENT = re.compile(r"^([ \t]+)[^ \t\r\n]", re.MULTILINE)
# Consuming escapes left to right keeps "\\u00e9" (an escaped backslash, then text) from counting.
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
_LIST_KEYS = ("facts", "items")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class ItemsError(ValueError):
    """The file as a whole cannot be read as a fact list.

    The message is a bare sentence so the caller can prefix the path it knows and we do not.
    """


@dataclass(frozen=True)
class Entry:
    """One element of the fact list (where it sits is ``ItemsDoc.spans[index]``).

    ``value`` is whatever JSON the element holds; non-objects are kept rather than rejected so the
    caller can report them per entry without losing the rest of the file.
    """

    index: int
    value: Any


@dataclass(frozen=True)
class ItemsDoc:
    """A parsed fact file plus the formatting facts needed to write back in the author's style.

    Those facts (where the list and each entry sit, the line ending, the indentation, the escaping) are found
    when first asked for: walking the text to locate each entry took six times as long as parsing it (0.42 s
    against 0.07 s for the 1,979 files of the 50k benchmark tree), and only an edit needs them.
    """

    text: str
    bom: bool
    list_key: str | None  # None: the file is the list itself
    wrapper: dict[str, Any]
    entries: tuple[Entry, ...]

    @functools.cached_property
    def _located(self) -> tuple[tuple[int, int], tuple[tuple[int, int], ...]]:
        open_pos = _skip_whitespace(self.text, 0)
        if self.list_key is not None:
            members, _ = walk_list(self.text, open_pos)
            # json.loads keeps the last of duplicate keys, so the list we edit must be that one too.
            open_pos = next(m.value_start for m in reversed(members) if m.key == self.list_key)
        items, close = walk_list(self.text, open_pos)
        return (open_pos, close), tuple((item.start, item.end) for item in items)

    @property
    def list_span(self) -> tuple[int, int]:
        """The offsets of the list's ``[`` and ``]`` themselves (both inclusive): edits that empty or fill the
        list rewrite what lies between them."""
        return self._located[0]

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Each entry's ``(start, end)``, ``end`` exclusive, so ``text[start:end]`` is the element."""
        return self._located[1]

    @functools.cached_property
    def newline(self) -> str:
        return _detect_newline(self.text)

    @functools.cached_property
    def indent_unit(self) -> str:
        return _detect_indent(self.text)

    @functools.cached_property
    def ensure_ascii(self) -> bool:
        return _detect_ensure_ascii(self.text)


@dataclass(frozen=True)
class Located:
    """An array element or object member located in text.

    For a member ``start`` is the key's opening quote, so cutting ``start:end`` drops the whole member
    while ``value_start:end`` is just the value.
    """

    key: str | None
    value: Any
    start: int
    value_start: int
    end: int


def parse_items(data: bytes) -> ItemsDoc:
    """Parse raw file bytes, raising ItemsError for anything that is not a usable fact list.

    We take bytes rather than text so that a BOM and invalid UTF-8 are ours to detect and report,
    instead of being silently accepted or replaced by whoever read the file.
    """
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(data) - len(body)
        raise ItemsError(f"not valid UTF-8 (byte 0x{body[exc.start]:02x} at offset {offset})") from None
    if not text.strip(_JSON_WHITESPACE):
        raise ItemsError("empty file")
    try:
        return _parse_text(text, bom)
    except RecursionError:
        raise ItemsError("JSON nested too deeply") from None


def _parse_text(text: str, bom: bool) -> ItemsDoc:
    """Validate with ``json.loads`` first so that its messages, not our walker, describe bad input."""
    try:
        top = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ItemsError(f"not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except ValueError as exc:
        # Not a syntax error but a limit the stdlib enforces, such as int digits; same verdict.
        raise ItemsError(f"not valid JSON: {exc}") from None
    if _depth_exceeds(top, MAX_DEPTH):
        raise ItemsError("JSON nested too deeply")
    if isinstance(top, list):
        list_key: str | None = None
        wrapper: dict[str, Any] = {}
        values = top
    elif isinstance(top, dict):
        list_key = _find_list_key(top)
        wrapper = {key: value for key, value in top.items() if key != list_key}
        values = top[list_key]
    else:
        raise ItemsError(f"top level is {describe_json_type(top)}, expected a list of facts or an object holding one")
    entries = tuple(Entry(i, value) for i, value in enumerate(values))
    return ItemsDoc(text=text, bom=bom, list_key=list_key, wrapper=wrapper, entries=entries)


def _depth_exceeds(top: Any, limit: int) -> bool:
    """Walk with an explicit stack, because the decoder's own limit depends on the Python version.

    Python 3.13's ``json`` accepts arrays thousands deep that 3.11 refuses; every later step (the walker,
    the YAML writer) recurses, so the same file must be refused the same way on every version, here.
    """
    stack: list[tuple[Any, int]] = [(top, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _find_list_key(top: dict[str, Any]) -> str:
    """Pick the wrapper key that holds the facts.

    Agents that invent their own key (``memories``, ``log``) would otherwise be unreadable, but we only
    guess when exactly one key holds a non-empty list of objects: an empty list or a list of strings
    is as likely to be ``tags`` as facts, and appending facts to the wrong key would corrupt the file.
    Having both standard keys is refused rather than guessed, since either could be the stale one.
    """
    present = [key for key in _LIST_KEYS if key in top]
    if len(present) > 1:
        raise ItemsError("both 'facts' and 'items' are present, expected only one")
    if present:
        key = present[0]
        if not isinstance(top[key], list):
            raise ItemsError(f"{key!r} is {describe_json_type(top[key])}, expected a list")
        return key
    candidates = [
        key
        for key, value in top.items()
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value)
    ]
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        names = ", ".join(repr(key) for key in candidates)
        raise ItemsError(f"no 'facts' or 'items' key, and several keys hold lists of objects: {names}")
    raise ItemsError("object has no 'facts' or 'items' list")


def lone_surrogate(value: Any) -> str | None:
    """The first half of a surrogate pair standing alone in a JSON value's strings, as its escape, or None.

    ``json`` accepts ``"\\ud83d"`` (what JavaScript's ``JSON.stringify`` writes for an emoji cut in two), but
    no such string can be written as UTF-8: a note, a commit or the base holding it would fail mid-pass. Keys
    are checked too. A file with no ``\\ud8..``-``\\udf..`` escape holds none, so callers ask only then
    (``may_hold_surrogates``).
    """
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(exc.object[exc.start]):04x}"
    return None


def may_hold_surrogates(text: str) -> bool:
    """Whether the file text has an escape that could decode to a lone surrogate (a cheap test for every read)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def describe_json_type(value: Any) -> str:
    """Name a JSON value's type the way a person reading the file would, not as a Python type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _skip_whitespace(text: str, pos: int) -> int:
    """Skip only JSON's four whitespace characters; str.isspace would also eat text JSON rejects."""
    match = _NON_WHITESPACE.search(text, pos)
    return match.start() if match else len(text)


def walk_list(text: str, open_pos: int) -> tuple[list[Located], int]:
    """Locate the elements or members of the array or object opening at ``open_pos``.

    Only text the stdlib has already accepted reaches here, so the punctuation between values can be
    trusted and skipped; every key and value still goes through ``raw_decode``. Returns the items and
    the offset of the closing bracket.
    """
    is_object = text[open_pos] == "{"
    items: list[Located] = []
    pos = _skip_whitespace(text, open_pos + 1)
    if text[pos] in "]}":
        return items, pos
    while True:
        start = pos
        key = None
        if is_object:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip_whitespace(text, _skip_whitespace(text, pos) + 1)
        value_start = pos
        value, pos = _DECODER.raw_decode(text, pos)
        items.append(Located(key, value, start, value_start, pos))
        pos = _skip_whitespace(text, pos)
        if text[pos] != ",":
            return items, pos
        pos = _skip_whitespace(text, pos + 1)


def _detect_newline(text: str) -> str:
    """Use the majority line ending so a file with one stray CRLF does not flip style."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _detect_indent(text: str) -> str:
    """Take the shallowest indentation as one level, which is what the outermost members use."""
    indents = _LEADING_INDENT.findall(text)
    if not indents:
        return "  "
    shallowest = min(indents, key=len)
    return "\t" if shallowest.startswith("\t") else shallowest


def _detect_ensure_ascii(text: str) -> bool:
    """Escape new non-ASCII text only if the file already does and never mixes in raw characters.

    Files from ``json.dump`` with its default ``ensure_ascii=True`` hold ``\\u5f20``; writing raw
    characters into such a file would mix styles, while a file with no non-ASCII text at all gives no
    evidence and is better served by readable raw UTF-8.
    """
    if not text.isascii():
        return False
    return any(match.group(1) and int(match.group(1), 16) >= 0x80 for match in _ESCAPE.finditer(text))
