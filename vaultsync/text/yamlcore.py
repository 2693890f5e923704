"""Frontmatter YAML that means the same thing to Obsidian, to YAML 1.1 tools and to us.

Obsidian reads frontmatter with the YAML 1.2 core schema, while PyYAML and most Python tooling
still speak YAML 1.1, where ``yes``, ``0b101``, ``10:30`` or ``2026-01-05`` are not strings. Facts
must survive a trip through a note unchanged, so we read with an exact 1.2 core loader and write
only text that no 1.1 or 1.2 reader can take for a different type. Notes are split by hand because
general-purpose frontmatter libraries normalise whitespace in the body, and a sync tool must never
rewrite prose it did not change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, ClassVar

import yaml
from yaml.constructor import BaseConstructor, ConstructorError, SafeConstructor
from yaml.nodes import Node, ScalarNode
from yaml.resolver import Resolver

__all__ = [
    "Core12Loader",
    "YamlError",
    "join_note",
    "load_yaml12",
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


class Core12Loader(yaml.SafeLoader):
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
            Core12Loader.add_implicit_resolver(tag, regex, first)
        Core12Loader.add_constructor(tag, constructor)


_install_core_schema()

if yaml.__with_libyaml__:

    class _Core12CLoader(yaml.cyaml.CParser, Core12Loader):  # type: ignore[misc]
        """The same schema over libyaml's parser: several times faster on a vault of thousands of notes."""

        def __init__(self, stream: str) -> None:
            yaml.cyaml.CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _LOADER: type[Core12Loader] = _Core12CLoader
else:
    _LOADER = Core12Loader


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
