"""Frontmatter YAML that means the same thing to Obsidian, to YAML 1.1 tools and to us.

Obsidian reads frontmatter with the YAML 1.2 core schema, while PyYAML and most Python tooling
still speak YAML 1.1, where ``yes``, ``0b101``, ``10:30`` or ``2026-01-05`` are not strings. Facts
must survive a trip through a note unchanged, so we read with an exact 1.2 core loader and write
only text that no 1.1 or 1.2 reader can take for a different type. Notes are split by hand because
general-purpose frontmatter libraries normalise whitespace in the body, and a sync tool must never
rewrite prose it did not change.
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Callable, Collection, Mapping
from json.encoder import encode_basestring
from typing import Any, ClassVar

import yaml
from yaml.constructor import BaseConstructor, ConstructorError, SafeConstructor
from yaml.nodes import Node, ScalarNode
from yaml.resolver import Resolver

__all__ = [
    "YamlError",
    "dump_properties",
    "dump_scalar",
    "join_note",
    "load_yaml12",
    "needs_quotes",
    "parse_properties",
    "split_note",
]


class YamlError(ValueError):
    """Frontmatter a person broke in Obsidian; the message is meant to be shown to that person.

    It subclasses ValueError so callers that treat any bad input alike need not know about YAML, and
    it keeps ``message`` and ``line`` apart so a UI can point at the line instead of parsing text.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message if line is None else f"{message} (line {line})")


_TAG = "tag:yaml.org,2002:"
_NULL, _BOOL, _INT, _FLOAT, _STR = (_TAG + name for name in ("null", "bool", "int", "float", "str"))


def _anchored(pattern: str) -> re.Pattern[str]:
    """PyYAML resolvers use ``match``; ``\\Z`` (unlike ``$``) cannot match before a final newline."""
    return re.compile(rf"(?:{pattern})\Z")


# The YAML 1.2 core schema, spelled out in the spec's own terms (section 10.3.2). ``[0-9]`` rather
# than ``\d`` because ``\d`` accepts non-ASCII digits, which YAML does not.
_NULL_RE = _anchored(r"~|null|Null|NULL|")
_BOOL_RE = _anchored(r"true|True|TRUE|false|False|FALSE")
_DEC_RE = _anchored(r"[-+]?[0-9]+")
_OCT_RE = _anchored(r"0o[0-7]+")
_HEX_RE = _anchored(r"0x[0-9a-fA-F]+")
_FLOAT_RE = _anchored(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF_RE = _anchored(r"[-+]?\.(?:inf|Inf|INF)")
_NAN_RE = _anchored(r"\.nan|\.NaN|\.NAN")

_DIGITS = list("0123456789")


def _construct_null(loader: BaseConstructor, node: Node) -> None:
    if not _NULL_RE.match(loader.construct_scalar(node)):
        raise ConstructorError(None, None, "a null must be written ~, null or nothing", node.start_mark)


def _construct_bool(loader: BaseConstructor, node: Node) -> bool:
    text = loader.construct_scalar(node)
    if not _BOOL_RE.match(text):
        raise ConstructorError(None, None, f"{text!r} is not true or false", node.start_mark)
    return text.lower() == "true"


def _construct_int(loader: BaseConstructor, node: Node) -> int:
    """PyYAML's own int constructor also accepts 1.1 forms (``0b``, ``1_000``, ``1:30``, ``017``)."""
    text = loader.construct_scalar(node)
    try:
        if _DEC_RE.match(text):
            return int(text, 10)
        if _OCT_RE.match(text):
            return int(text[2:], 8)
        if _HEX_RE.match(text):
            return int(text[2:], 16)
    except ValueError as exc:  # Python refuses decimal conversions of more than 4300 digits.
        raise ConstructorError(None, None, f"number is too long: {exc}", node.start_mark) from exc
    raise ConstructorError(None, None, f"{text!r} is not a YAML 1.2 integer", node.start_mark)


def _construct_float(loader: BaseConstructor, node: Node) -> float:
    text = loader.construct_scalar(node)
    if _INF_RE.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN_RE.match(text):
        return math.nan
    if _FLOAT_RE.match(text):
        return float(text)
    raise ConstructorError(None, None, f"{text!r} is not a YAML 1.2 number", node.start_mark)


class _Core12Loader(yaml.SafeLoader):
    """SafeLoader restricted to exactly the YAML 1.2 core schema.

    Both tables are replaced wholesale at class level, so PyYAML's shared SafeLoader is untouched
    and nothing outside the core schema (timestamps, merge keys, ``=``, sets, binary) can appear:
    everything this loader returns is JSON-shaped apart from non-finite floats.
    """

    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {}
    yaml_constructors: ClassVar[dict[str | None, Callable[..., Any]]] = {
        tag: yaml.SafeLoader.yaml_constructors[tag]
        for tag in (_STR, _TAG + "seq", _TAG + "map", None)  # None: the "unknown tag" error
    }

    def construct_mapping(self, node: Node, deep: bool = False) -> dict[Any, Any]:
        """Refuse duplicate keys: PyYAML keeps the last one, silently losing what a person typed.

        Skipping SafeConstructor's version also skips its merge-key (``<<``) expansion.
        """
        mapping = BaseConstructor.construct_mapping(self, node, deep=deep)
        if len(mapping) != len(node.value):
            seen: list[Any] = []
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)  # cached: not built twice
                if key in seen:
                    shown = key_node.value if isinstance(key_node, ScalarNode) else key
                    raise YamlError(f"duplicate key {shown!r}", key_node.start_mark.line + 1)
                seen.append(key)
        return mapping


def _install_core_schema() -> None:
    """Int is registered before float on purpose: ``[-+]?[0-9]+`` matches both, and 1.2 says int."""
    for tag, regexes, first, constructor in (
        (_NULL, [_NULL_RE], ["~", "n", "N", ""], _construct_null),
        (_BOOL, [_BOOL_RE], list("tTfF"), _construct_bool),
        (_INT, [_DEC_RE, _OCT_RE, _HEX_RE], ["-", "+", *_DIGITS], _construct_int),
        (_FLOAT, [_FLOAT_RE, _INF_RE, _NAN_RE], ["-", "+", ".", *_DIGITS], _construct_float),
    ):
        for regex in regexes:
            _Core12Loader.add_implicit_resolver(tag, regex, first)
        _Core12Loader.add_constructor(tag, constructor)


_install_core_schema()

if yaml.__with_libyaml__:

    class _Core12CLoader(yaml.cyaml.CParser, _Core12Loader):  # type: ignore[misc]
        """The same schema over libyaml's parser: several times faster on a vault of thousands of notes."""

        def __init__(self, stream: str) -> None:
            yaml.cyaml.CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _LOADER: type[_Core12Loader] = _Core12CLoader
else:
    _LOADER = _Core12Loader


def load_yaml12(text: str) -> Any:
    """Read YAML the way Obsidian does, turning every failure into one YamlError a person can act on."""
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        # libyaml may place the problem at the end of the input; the earlier of the two marks is where to look.
        lines = [mark.line + 1 for mark in (exc.problem_mark, exc.context_mark) if mark is not None]
        message = ", ".join(part for part in (exc.context, exc.problem) if part) or "invalid YAML"
        if "nesting depth" in message:
            message = "frontmatter is nested too deeply"
        raise YamlError(message, min(lines) if lines else None) from exc
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise YamlError(f"character U+{exc.character:04X} is not allowed", line) from exc
    except yaml.YAMLError as exc:
        raise YamlError(str(exc)) from exc
    except RecursionError as exc:
        raise YamlError("frontmatter is nested too deeply") from exc


# One resolver per YAML version; ``resolve`` only consults class-level tables, so sharing is safe.
_RESOLVER_12 = _Core12Loader("")
_RESOLVER_11 = yaml.SafeLoader("")

# The YAML 1.1 spec also makes y/Y/n/N booleans. PyYAML ignores that, but other 1.1 readers
# (Go's yaml.v2, for one) do not, so these must be quoted too.
_YAML11_SPEC_BOOLS = frozenset({"y", "Y", "n", "N"})

# Characters YAML cannot carry raw: non-printables (which PyYAML rejects even inside quotes), the
# C1 range, the BOM (not allowed inside a 1.2 document) and NEL/LS/PS, which YAML 1.1 treats as
# line breaks and would fold away inside a quoted scalar.
_NEEDS_ESCAPE = "\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"
_ESCAPE_RE = re.compile(f"[{_NEEDS_ESCAPE}]")
_NOT_PLAIN_CHARS_RE = re.compile(f"[\x00-\x1f{_NEEDS_ESCAPE}]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


# A word of ASCII letters, digits, "-" and "_" that starts with a letter: the only such strings either YAML
# version reads as anything but text are its booleans and nulls, which are words of letters alone.
_PLAIN_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_PLAIN_WORD_LETTERS_RE = re.compile(r"[A-Za-z]+\Z")


@functools.lru_cache(maxsize=1 << 12)  # the same statuses, categories and keys recur in every note
def needs_quotes(s: str) -> bool:
    """Decide whether ``s`` must be quoted to come back as this very string from any reader.

    Quoting more than strictly needed is harmless, so doubtful cases quote; quoting too little
    silently changes a fact's type in some reader, so every rule here errs toward quoting.
    """
    if _PLAIN_WORD_RE.match(s) and not _PLAIN_WORD_LETTERS_RE.match(s):
        return False  # ids and slugs ("f-0012", "sarah-chen"), without asking two resolvers
    if s == "" or s[0].isspace() or s[-1].isspace():
        return True
    if s[0] in _INDICATORS or s == "..." or s.startswith("... "):  # "..." at column 0 ends a document
        return True
    if ": " in s or " #" in s or s.endswith(":") or _NOT_PLAIN_CHARS_RE.search(s):
        return True
    if s in _YAML11_SPEC_BOOLS:
        return True
    plain = (True, False)
    return _RESOLVER_12.resolve(ScalarNode, s, plain) != _STR or _RESOLVER_11.resolve(ScalarNode, s, plain) != _STR


def _escape_char(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _quote(s: str) -> str:
    """Double-quote ``s`` so the result is both a valid YAML scalar and a valid JSON string.

    JSON already escapes quotes, backslashes and C0 controls with escapes YAML shares; only the
    characters YAML additionally cannot hold raw are escaped on top, always as ``\\uXXXX``.
    """
    return _ESCAPE_RE.sub(_escape_char, encode_basestring(s))  # json.dumps(s, ensure_ascii=False), minus its set-up


def _float_text(value: float) -> str:
    """A repr both YAML versions read back as this float.

    YAML 1.1 requires a dot in a float, so ``1e+16`` gains one (``1.0e+16``); YAML 1.2 and JSON
    accept that spelling too. repr always signs its exponent, which YAML 1.1 also requires.
    """
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?\Z")


def _is_iso_date(s: str) -> bool:
    """Only real calendar dates count: Obsidian shows anything else as text, so it gains nothing."""
    if not _ISO_DATE_RE.match(s):
        return False
    try:
        datetime.datetime.fromisoformat(s)
    except ValueError:
        return False
    return True


def dump_scalar(value: Any, *, allow_plain_date: bool = False) -> str:
    """Write one JSON scalar so that it reads back with the same type and value.

    ``allow_plain_date`` exists because Obsidian only offers its date picker for unquoted dates;
    a YAML 1.2 reader still sees a string, while a YAML 1.1 reader would see a timestamp, so
    callers opt in per property rather than getting it everywhere.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))  # int() so IntEnum members print as numbers
    if isinstance(value, float):
        return _float_text(float(value))
    if isinstance(value, str):
        if (allow_plain_date and _is_iso_date(value)) or not needs_quotes(value):
            return value
        return _quote(value)
    raise TypeError(f"cannot write a {type(value).__name__} as a YAML scalar")


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


# YAML (and PyYAML) limit an implicit key to 1024 characters; Obsidian's JavaScript reader counts
# UTF-16 code units, so that is what we measure. Longer keys are written as explicit ``? key``.
_MAX_IMPLICIT_KEY = 1024


def _is_long_key(key_text: str) -> bool:
    # A character is at most two code units, so most keys are answered without encoding them.
    return len(key_text) * 2 > _MAX_IMPLICIT_KEY and len(key_text.encode("utf-16-le")) // 2 > _MAX_IMPLICIT_KEY


def _flow(value: Any) -> str:
    """JSON for ordinary JSON values, but YAML where JSON cannot express something YAML needs.

    The output equals ``json.dumps(value, ensure_ascii=False)`` except that non-finite floats are
    written as ``.inf``/``.nan``, floats without a dot gain ``.0``, characters YAML cannot hold raw
    are escaped, and over-long keys use explicit ``?`` entries, which PyYAML and Obsidian require.
    """
    if isinstance(value, Mapping):
        entries = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"object keys must be strings, not {type(key).__name__}")
            key_text = _quote(key)
            prefix = "? " if _is_long_key(key_text) else ""
            entries.append(f"{prefix}{key_text}: {_flow(item)}")
        return "{" + ", ".join(entries) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, str):
        return _quote(value)
    return dump_scalar(value)


@functools.lru_cache(maxsize=1024)
def _head(key: str) -> str:
    """``key:`` as a property line starts; notes share a handful of property names, so this is cached."""
    key_text = _quote(key) if needs_quotes(key) else key
    return f"? {key_text}\n:" if _is_long_key(key_text) else f"{key_text}:"


def _property(key: str, value: Any, allow_plain_date: bool) -> str:
    head = _head(key)
    if isinstance(value, list) and value and all(_is_scalar(item) for item in value):
        # Obsidian's own list style, so a property it rewrites produces no spurious diff.
        return head + "".join(f"\n  - {dump_scalar(item)}" for item in value) + "\n"
    if isinstance(value, list | Mapping):
        return f"{head} {_flow(value)}\n"
    return f"{head} {dump_scalar(value, allow_plain_date=allow_plain_date)}\n"


def dump_properties(props: Mapping[str, Any], *, date_keys: Collection[str] = ()) -> str:
    """Render flat frontmatter the way Obsidian would write it, in the caller's key order.

    Nested values have no Obsidian property type, so they are kept on one line as JSON-style flow
    YAML, which stays readable and cannot be mistaken for a list of separate properties.
    """
    lines = []
    for key, value in props.items():
        if not isinstance(key, str):
            raise TypeError(f"property names must be strings, not {type(key).__name__}")
        lines.append(_property(key, value, key in date_keys))
    return "".join(lines)


_FENCE = "---"


def split_note(text: str) -> tuple[str | None, str]:
    """Separate frontmatter from the body without touching a single byte of either.

    A note has frontmatter when its first line is exactly ``---`` (ending in ``\\n`` or
    ``\\r\\n``) and some later line is ``---`` followed only by spaces; the first such line closes
    it. The frontmatter is the text between the two fence lines (empty, or ending in a line
    break); the body is everything after the closing line's line break. Anything else is all body.
    """
    if text.startswith(_FENCE + "\n"):
        start = len(_FENCE) + 1
    elif text.startswith(_FENCE + "\r\n"):
        start = len(_FENCE) + 2
    else:
        return None, text
    pos = start
    while True:
        newline = text.find("\n", pos)
        end = len(text) if newline == -1 else newline
        line = text[pos:end]
        if newline != -1 and line.endswith("\r"):
            line = line[:-1]
        if line.rstrip(" ") == _FENCE:
            return text[start:pos], "" if newline == -1 else text[newline + 1 :]
        if newline == -1:
            return None, text
        pos = newline + 1


def join_note(frontmatter_text: str | None, body: str) -> str:
    """Reassemble a note: ``"---\\n" + frontmatter_text + "---\\n" + body``, or just ``body``.

    The exact inverse rule: ``split_note(join_note(f, b)) == (f, b)`` for every pair this accepts,
    and ``join_note(*split_note(t)) == t`` for every ``t`` that has no frontmatter or whose fences
    are exactly ``---\\n``. Pairs that could not read back as themselves raise ValueError instead
    of being silently rewritten: frontmatter that is non-empty without a final ``\\n`` or that
    contains a fence line, and (with ``None``) a body that itself reads as frontmatter, which
    Obsidian would show as properties; pass ``""`` to keep such a body intact.
    """
    note = body if frontmatter_text is None else f"{_FENCE}\n{frontmatter_text}{_FENCE}\n{body}"
    if _reads_back(frontmatter_text):
        return note  # the common case, told without splitting the note again (a first import joins 50k)
    if split_note(note) != (frontmatter_text, body):
        if frontmatter_text is None:
            raise ValueError("body starts with a frontmatter block; give empty frontmatter to keep it")
        raise ValueError("frontmatter must be empty or end with a newline, and contain no '---' line")
    return note


def _reads_back(frontmatter_text: str | None) -> bool:
    """Frontmatter that surely closes at the fence ``join_note`` puts after it: it ends its last line and no
    line of it starts with ``---``. (Only such a line can be read as the closing fence.)"""
    if not frontmatter_text:
        return frontmatter_text == ""
    text = frontmatter_text
    return text.endswith("\n") and not text.startswith(_FENCE) and "\n---" not in text


def parse_properties(frontmatter_text: str) -> dict[str, Any]:
    """Read frontmatter as Obsidian properties: a flat mapping from names to values.

    Numeric and boolean names are accepted because Obsidian shows them as ordinary property names,
    but two names that become the same text are an error rather than one silently winning.
    """
    data = load_yaml12(frontmatter_text)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise YamlError("frontmatter is not a set of properties")
    props: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(key, bool | int | float):
            name = str(key)
        elif isinstance(key, str):
            name = key
        else:
            raise YamlError(f"property name {key!r} is not text")
        if name in props:
            raise YamlError(f"duplicate key {name!r}")
        props[name] = value
    return props
