"""Facts must come back from a note with the exact value and JSON type they went in with.

The examples pin down the cases people actually hit (``yes``, version-like strings, dates, lists
Obsidian re-serialised); the Hypothesis properties guard everything else, because YAML's
ambiguities are far too many to enumerate by hand.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultsync.text.yamlcore import YamlError, join_note, load_yaml12, parse_properties, split_note
from vaultsync.text.yamldump import dump_properties, dump_scalar, needs_quotes

AMBIGUOUS = [
    "yes", "no", "on", "off", "y", "n", "Y", "N", "Yes", "ON", "true", "True", "FALSE", "null", "Null",
    "NULL", "~", "1e3", "1E3", "0x1F", "0o17", "1_000", "2026-1-5", "2026-01-05", "2026-01-05T10:30",
    "2026-01-05 10:30:00", "10:30", "1:30:00", ".inf", "-.inf", "+.INF", ".nan", ".NaN", "0b101", "012",
    "+1", "-0", "1.0", "1.", ".5", "-.5e-3", "6.02e+23", "=", "<<", "", " ", " x", "x ", "a: b", "a:",
    "a #b", "#tag", "- x", "-", "?", "? x", ":", "[x]", "{x}", "*a", "&a", "!x", "%x", "@x", "`x",
    "'x'", '"x"', "|", ">", ",", "...", "... x", "---", "--- x", "1234567890123456",
    "99999999999999999999999", "\ufeffx", "x\ufeff", "a\u2028b", "a\u2029b", "a\x85b", "\x7f", "\x9f",
    "\ufffe", "\uffff", "\t", "a\tb", "line\nbreak", "trailing\n", "\r\n", "back\\slash", "quote\"d",
    "it's", "\\", '"', "a\\nb", "\u00a0x", "x\u3000",
]  # fmt: skip
CONTROL_CHARS = [chr(c) for c in range(0x20)] + [f"a{chr(c)}b" for c in range(0x20)]
PLAIN_OK = [
    "hello world",
    "中文笔记",
    "😀 emoji",
    "a:b",
    "a#b",
    "1.2.3",
    "v1.0",
    "0O17",
    "nan",
    "inf",
    "C#",
    "x-y",
]

# Every character class except lone surrogates, which cannot be written to a UTF-8 file anyway.
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)))


def digits(least: int, most: int) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from("0123456789"), min_size=least, max_size=most)


# Plain st.text() rarely stumbles on YAML's number and keyword forms, so feed those in on purpose. Built from
# st.text rather than st.from_regex: the same strings (what r"[-+.0-9eEoxXbB_:~ #TtFfNnYy]{1,10}" and
# r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{2}(:[0-9]{2})?)?" match), drawn several times faster.
TRICKY_TEXT = st.one_of(
    ANY_TEXT,
    st.sampled_from(AMBIGUOUS + CONTROL_CHARS + PLAIN_OK),
    st.text(st.sampled_from("-+.0123456789eEoxXbB_:~ #TtFfNnYy"), min_size=1, max_size=10),
    st.builds(
        "{}-{}-{}{}".format,
        digits(4, 4),
        digits(1, 2),
        digits(1, 2),
        st.just("")
        | st.builds(
            "{}{}:{}{}".format,
            st.sampled_from("Tt "),
            digits(1, 2),
            digits(2, 2),
            st.just("") | digits(2, 2).map(":{}".format),
        ),
    ),
)
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    TRICKY_TEXT,
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(TRICKY_TEXT, inner, max_size=5),
    max_leaves=20,
)


def assert_same(actual: Any, expected: Any) -> None:
    """``==`` alone would accept 1 for 1.0 or True; a fact's JSON type is part of its value."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
    elif isinstance(expected, list):
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected, strict=True):
            assert_same(got, want)
    elif isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual)
    else:
        assert actual == expected


def roundtrip(props: dict[str, Any]) -> dict[str, Any]:
    return parse_properties(dump_properties(props))


@pytest.mark.parametrize("s", AMBIGUOUS + CONTROL_CHARS + PLAIN_OK)
def test_ambiguous_strings_stay_strings(s: str) -> None:
    props = {"value": s, s: "as a key", "list": [s, s]}
    assert_same(roundtrip(props), props)
    assert yaml.safe_load(dump_properties(props)) == props


@pytest.mark.parametrize("s", PLAIN_OK)
def test_unambiguous_text_is_written_plain(s: str) -> None:
    assert not needs_quotes(s)
    assert dump_properties({"k": s}) == f"k: {s}\n"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-17, "-17"),
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (1e16, "1.0e+16"),
        (1.5e-7, "1.5e-07"),
        (math.inf, ".inf"),
        (-math.inf, "-.inf"),
        (math.nan, ".nan"),
        ("yes", '"yes"'),
        ("tab\there", '"tab\\there"'),
        ("nl\n", '"nl\\n"'),
        ("\x01\x7f\x85\u2028\ufeff", '"\\u0001\\u007f\\u0085\\u2028\\ufeff"'),
        ("中文 😀", "中文 😀"),
        ('"hi" \\o/', '"\\"hi\\" \\\\o/"'),
    ],
)
def test_dump_scalar_spelling(value: Any, text: str) -> None:
    assert dump_scalar(value) == text
    assert_same(load_yaml12(f"k: {text}")["k"], value)


def test_json_types_are_kept() -> None:
    props = {
        "int": 1,
        "float": 1.0,
        "bool": True,
        "zero": 0,
        "fzero": 0.0,
        "false": False,
        "null": None,
        "big": 12345678901234567890123,
        "huge_float": 1e300,
        "tiny": 5e-324,
        "tags": ["a", "yes", 1, 1.0, True, None],
        "empty": [],
        "obj": {},
        "nested": {"a": [1, {"b": None, "c": [True, "0x1F"]}], "yes": {"on": 1.5}},
        "list_of_lists": [[1, 2], ["x"]],
    }
    assert_same(roundtrip(props), props)


def test_non_finite_floats_survive_at_any_depth() -> None:
    props = {"inf": math.inf, "list": [-math.inf, math.nan], "obj": {"x": [math.nan, math.inf]}}
    assert_same(roundtrip(props), props)


def test_layout_matches_obsidian() -> None:
    text = dump_properties(
        {
            "title": "My note",
            "tags": ["project", "yes"],
            "aliases": [],
            "due": "2026-01-05",
            "meta": {"k": 1},
        },
        date_keys={"due"},
    )
    assert text == ('title: My note\ntags:\n  - project\n  - "yes"\naliases: []\ndue: 2026-01-05\nmeta: {"k": 1}\n')
    assert dump_properties({}) == ""


@pytest.mark.parametrize("s", ["2026-01-05", "2026-01-05T10:30:59"])
def test_dates_are_plain_only_when_asked(s: str) -> None:
    assert dump_scalar(s) == f'"{s}"'  # YAML 1.1 would read a timestamp
    assert dump_scalar(s, allow_plain_date=True) == s
    assert load_yaml12(f"k: {s}") == {"k": s}
    assert roundtrip({"due": s}) == {"due": s}
    assert parse_properties(dump_properties({"due": s}, date_keys={"due"})) == {"due": s}


@pytest.mark.parametrize("s", ["2026-02-30", "2026-13-01", "2026-01-05T25:00:00", "2026-01-05 10:30:00", "yes"])
def test_only_real_iso_dates_go_plain(s: str) -> None:
    assert dump_scalar(s, allow_plain_date=True) == f'"{s}"'


@pytest.mark.parametrize("s", ["2026-1-5", "2026-01-05T10:30", "2026-01-05 10:30", "2026-01-05T25:00"])
def test_date_like_text_that_no_reader_types_stays_plain(s: str) -> None:
    """YAML 1.1 timestamps need two-digit dates or a seconds field; without them this is just text."""
    assert dump_scalar(s) == s
    assert yaml.safe_load(f"k: {s}") == load_yaml12(f"k: {s}") == {"k": s}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tags: [a, b]", {"tags": ["a", "b"]}),
        ("tags:\n- a\n- b", {"tags": ["a", "b"]}),
        ("tags:\n    - a\n    - b", {"tags": ["a", "b"]}),
        ("'tags':\n  - 'a'\n  - \"b\"", {"tags": ["a", "b"]}),
        ("\"my key\": 'it''s'", {"my key": "it's"}),
        ("k: >-\n  folded\n  text", {"k": "folded text"}),
        ("k:", {"k": None}),
        ("# only a comment", {}),
        ("", {}),
        ("k: !!str 12", {"k": "12"}),
        ("k: !!float 1", {"k": 1.0}),
        ("1: a\n1.5: b\nfalse: c", {"1": "a", "1.5": "b", "False": "c"}),
    ],
)
def test_obsidian_rewrites_still_load(text: str, expected: dict[str, Any]) -> None:
    assert_same(parse_properties(text), expected)


@pytest.mark.parametrize(
    ("plain", "expected"),
    [
        ("yes", "yes"),
        ("on", "on"),
        ("y", "y"),
        ("0o17", 15),
        ("0x1F", 31),
        ("012", 12),
        ("0b101", "0b101"),
        ("1_000", "1_000"),
        ("2026-01-05", "2026-01-05"),
        ("10:30", "10:30"),
        ("1e3", 1000.0),
        ("1.", 1.0),
        (".5", 0.5),
        ("+12", 12),
        ("-0", 0),
        ("+.inf", math.inf),
        ("-.Inf", -math.inf),
        ("<<", "<<"),
        ("=", "="),
        ("~", None),
        ("NULL", None),
        ("TRUE", True),
        ("False", False),
        ("tRUE", "tRUE"),
    ],
)
def test_loader_uses_yaml_1_2_core(plain: str, expected: Any) -> None:
    assert_same(load_yaml12(f"k: {plain}")["k"], expected)


def test_loader_leaves_pyyaml_alone() -> None:
    assert yaml.safe_load("k: yes") == {"k": True}
    assert yaml.safe_load("k: 0b101") == {"k": 5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb: 2\na: 3", "duplicate key 'a' (line 3)"),
        ("a: {x: 1, x: 2}", "duplicate key 'x'"),
        ("1: a\n'1': b", "duplicate key '1'"),
        ("1: a\ntrue: b", "duplicate key 'true'"),  # Python cannot keep 1 and True apart as keys
        ("- a\n- b", "frontmatter is not a set of properties"),
        ("just text", "frontmatter is not a set of properties"),
        ("a: [1", "(line 1)"),
        ("a: b: c", "line 1"),
        ("a: \x00", "U+0000"),
        ("? [1]\n: 2", "unhashable"),
        ("~: 1", "is not text"),
        ("a: !!timestamp 2026-01-05", "constructor"),
        ("a: !!int 0b101", "not a YAML 1.2 integer"),
        ("a: !!bool yes", "not true or false"),
        ("a: 1\n---\nb: 2", "expected a single document in the stream, but found another document"),
        ("a: *nowhere", "undefined alias"),
        ("a: " + "[" * 5000, "nested too deeply"),
    ],
)
def test_broken_frontmatter_raises_yaml_error(text: str, message: str) -> None:
    with pytest.raises(YamlError, match=re.escape(message)):
        parse_properties(text)


def test_yaml_error_is_a_value_error_with_line() -> None:
    with pytest.raises(ValueError) as info:
        load_yaml12("a: 1\na: 2")
    assert isinstance(info.value, YamlError)
    assert info.value.line == 2
    assert info.value.message == "duplicate key 'a'"


def test_over_long_keys_use_explicit_form() -> None:
    long_key = "k" * 1100
    emoji_key = "😀" * 600  # 600 characters but 1200 UTF-16 units, as Obsidian counts them
    props = {long_key: "v", emoji_key: ["a", "b"], "nested": {long_key: {emoji_key: 1}}}
    text = dump_properties(props)
    assert f"? {long_key}\n: v\n" in text
    assert_same(parse_properties(text), props)
    assert yaml.safe_load(text) == props


def test_unwritable_values_are_rejected() -> None:
    with pytest.raises(TypeError):
        dump_scalar(b"bytes")
    with pytest.raises(TypeError):
        dump_properties({"k": {1: "int key"}})
    with pytest.raises(TypeError):
        dump_properties({1: "x"})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("note", "frontmatter", "body"),
    [
        ("---\na: 1\n---\nbody\n", "a: 1\n", "body\n"),
        ("---\n---\n", "", ""),
        ("---\n---\n\n\n  body  ", "", "\n\n  body  "),
        ("---\na: 1\n---", "a: 1\n", ""),
        ("---\na: 1\n---   \nbody", "a: 1\n", "body"),
        ("---\r\na: 1\r\n---\r\nbody\r\n", "a: 1\r\n", "body\r\n"),
        ("---\na: 1\n---\n---\nmore\n---\n", "a: 1\n", "---\nmore\n---\n"),
        ("no frontmatter\n---\n", None, "no frontmatter\n---\n"),
        ("---\nnever closed\n", None, "---\nnever closed\n"),
        ("--- \na: 1\n---\n", None, "--- \na: 1\n---\n"),
        ("\ufeff---\na: 1\n---\n", None, "\ufeff---\na: 1\n---\n"),
        ("---\na: 1\n----\n", None, "---\na: 1\n----\n"),
        ("---\na: 1\n ---\n", None, "---\na: 1\n ---\n"),
        ("---\na: 1\n---\t\n", None, "---\na: 1\n---\t\n"),
        ("", None, ""),
        ("---", None, "---"),
    ],
)
def test_split_note(note: str, frontmatter: str | None, body: str) -> None:
    assert split_note(note) == (frontmatter, body)


@pytest.mark.parametrize(
    ("frontmatter", "body"),
    [("a: 1", "x"), ("a: 1\n---\n", "x"), ("a: 1\n---  \nb: 2\n", ""), (None, "---\na\n---\nx")],
)
def test_join_note_refuses_what_would_not_read_back(frontmatter: str | None, body: str) -> None:
    with pytest.raises(ValueError):
        join_note(frontmatter, body)


def test_full_note_roundtrip() -> None:
    props = {"title": "Q3 plan", "tags": ["work", "on"], "done": False}
    body = "# Heading\r\n\r\nText with trailing spaces   \r\n---\r\nno final newline"
    note = join_note(dump_properties(props), body)
    frontmatter, got_body = split_note(note)
    assert got_body == body
    assert frontmatter is not None
    assert_same(parse_properties(frontmatter), props)


@settings(max_examples=300)
@given(st.dictionaries(TRICKY_TEXT, JSON_VALUES, max_size=8))
def test_properties_roundtrip_with_exact_types(props: dict[str, Any]) -> None:
    assert_same(roundtrip(props), props)


@settings(max_examples=300)
@given(st.dictionaries(TRICKY_TEXT, JSON_SCALARS | st.lists(JSON_SCALARS, max_size=4), max_size=8))
def test_flat_properties_also_read_back_under_yaml_1_1(props: dict[str, Any]) -> None:
    """Flow values are JSON, whose exponent floats YAML 1.1 reads as text, so only flat ones here."""
    assert_same(yaml.safe_load(dump_properties(props)) or {}, props)


@settings(max_examples=300)
@given(TRICKY_TEXT)
@example("\x85")
@example("\u2028")
@example("\ufeff")
@example("y")
def test_any_string_reads_back_under_both_yaml_versions(s: str) -> None:
    text = "k: " + dump_scalar(s)
    assert_same(load_yaml12(text), {"k": s})
    assert_same(yaml.safe_load(text), {"k": s})


@settings(max_examples=500)
@given(st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,12}", fullmatch=True))
@example("Yes-no")
@example("yes")
@example("Off")
@example("NULL")
@example("null_")
@example("on-1")
@example("N0")
@example("e5")
@example("inf-x")
def test_ascii_words_read_back_under_both_yaml_versions(s: str) -> None:
    """Ids and slugs skip the resolvers (``needs_quotes``' first rule); letters-only words still ask them."""
    text = "k: " + dump_scalar(s)
    assert_same(load_yaml12(text), {"k": s})
    assert_same(yaml.safe_load(text), {"k": s})


@settings(max_examples=300)
@given(TRICKY_TEXT)
def test_plain_dates_still_read_back_under_yaml_1_2(s: str) -> None:
    assert_same(load_yaml12("k: " + dump_scalar(s, allow_plain_date=True)), {"k": s})


NOTE_PIECES = st.one_of(
    ANY_TEXT,
    st.sampled_from(["---", "--- ", "---  ", "----", " ---", "---\t", "---\r", "a: 1", "", "\r"]),
)
NOTE_TEXT = st.builds(
    "".join,
    st.lists(st.one_of(NOTE_PIECES, st.sampled_from(["\n", "\r\n", "\r"])), max_size=12),
)
FRONTMATTER = st.one_of(
    st.just(""),
    st.dictionaries(TRICKY_TEXT, JSON_VALUES, max_size=4).map(dump_properties),
)


@settings(max_examples=300)
@given(FRONTMATTER, NOTE_TEXT)
def test_join_then_split_is_exact(frontmatter: str, body: str) -> None:
    note = join_note(frontmatter, body)
    assert split_note(note) == (frontmatter, body)
    assert join_note(*split_note(note)) == note


@settings(max_examples=500)
@given(st.one_of(st.none(), NOTE_TEXT), NOTE_TEXT)
def test_join_note_accepts_exactly_the_pairs_that_read_back(frontmatter: str | None, body: str) -> None:
    """Its quick check for ordinary frontmatter never lets through a pair the full rule refuses."""
    glued = body if frontmatter is None else f"---\n{frontmatter}---\n{body}"
    if split_note(glued) == (frontmatter, body):
        assert join_note(frontmatter, body) == glued
    else:
        with pytest.raises(ValueError):
            join_note(frontmatter, body)


@settings(max_examples=300)
@given(NOTE_TEXT)
def test_body_without_frontmatter_is_kept_or_refused(body: str) -> None:
    if split_note(body)[0] is None:
        assert join_note(None, body) == body
        assert split_note(join_note(None, body)) == (None, body)
    else:
        with pytest.raises(ValueError):
            join_note(None, body)


@settings(max_examples=300)
@given(NOTE_TEXT, NOTE_TEXT)
def test_split_never_loses_a_byte(prefix: str, rest: str) -> None:
    note = "---\n" + prefix + rest
    frontmatter, body = split_note(note)
    if frontmatter is None:
        assert body == note
        return
    assert note.startswith("---\n" + frontmatter)
    fence = note[len("---\n" + frontmatter) : len(note) - len(body)]
    assert re.fullmatch(r"--- *(\r?\n|\Z)", fence)
    assert fence.endswith("\n") or body == ""
    if fence == "---\n":
        assert join_note(frontmatter, body) == note
