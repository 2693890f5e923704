"""Writing frontmatter that no YAML 1.1 or 1.2 reader can take for another type than the one meant.

Obsidian reads properties with the YAML 1.2 core schema and much other tooling with YAML 1.1; a string such as
``yes``, ``0x1F`` or ``2026-01-05`` must be quoted for both to read it back as the same string
(``yamlcore.py`` reads it the way Obsidian does).
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Collection, Mapping
from json.encoder import encode_basestring
from typing import Any

import yaml
from yaml.nodes import ScalarNode

from vaultsync.text.yamlcore import Core12Loader

__all__ = ["dump_properties", "dump_scalar", "needs_quotes"]

_STR = "tag:yaml.org,2002:str"

# One resolver per YAML version; ``resolve`` only consults class-level tables, so sharing is safe.
_RESOLVER_12 = Core12Loader("")
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
