"""Tests for vaultsync.memory.items: reading fact files and rewriting them with minimal diffs."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultsync.memory.items import ItemsError, parse_items
from vaultsync.memory.items_edit import (
    AppendEntry,
    DeleteEntry,
    Edit,
    RemoveFields,
    SetFields,
    apply_edits,
    new_items_file,
)

BOM = b"\xef\xbb\xbf"

THREE_FACTS = """\
[
  {
    "id": "sarah-001",
    "fact": "Sarah works at Acme",
    "category": "status",
    "timestamp": "2026-01-15",
    "source": "conversation",
    "status": "active",
    "supersededBy": null
  },
  {
    "id": "sarah-002",
    "fact": "Sarah prefers tea",
    "category": "preference",
    "timestamp": "2026-01-16",
    "source": "conversation",
    "status": "active",
    "supersededBy": null
  },
  {
    "id": "sarah-003",
    "fact": "Sarah lives in Berlin",
    "category": "status",
    "timestamp": "2026-01-17",
    "source": "conversation",
    "status": "active",
    "supersededBy": null
  }
]
"""

SMALL = """\
[
    {
        "id": "a",
        "fact": "one"
    },
    {
        "id": "b",
        "fact": "two"
    },
    {
        "id": "c",
        "fact": "three"
    }
]
"""


def changed_lines(before: str, after: str) -> list[str]:
    """The +/- lines of a unified diff, so tests can pin exactly which lines an edit touched."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def edit_text(source: str, *edits: Edit) -> str:
    return apply_edits(parse_items(source.encode()), edits).decode()


# --- shapes -----------------------------------------------------------------------------------------


def test_bare_array() -> None:
    doc = parse_items(THREE_FACTS.encode())
    assert doc.list_key is None
    assert doc.wrapper == {}
    assert doc.bom is False
    assert doc.newline == "\n"
    assert doc.indent_unit == "  "
    assert doc.ensure_ascii is False
    assert [entry.index for entry in doc.entries] == [0, 1, 2]
    assert [entry.value["id"] for entry in doc.entries] == ["sarah-001", "sarah-002", "sarah-003"]
    assert doc.entries[1].value == {
        "id": "sarah-002",
        "fact": "Sarah prefers tea",
        "category": "preference",
        "timestamp": "2026-01-16",
        "source": "conversation",
        "status": "active",
        "supersededBy": None,
    }
    assert list(doc.entries[0].value) == [
        "id",
        "fact",
        "category",
        "timestamp",
        "source",
        "status",
        "supersededBy",
    ]
    start, end = doc.spans[2]
    assert doc.text[start:end].startswith('{\n    "id": "sarah-003"')
    assert doc.text[start:end].endswith('"supersededBy": null\n  }')
    open_pos, close = doc.list_span
    assert (open_pos, doc.text[open_pos], doc.text[close]) == (0, "[", "]")
    assert close == len(THREE_FACTS) - 2


def test_wrapper_with_facts_keeps_other_keys() -> None:
    source = """\
{
  "entity": "sarah",
  "type": "person",
  "facts": [
    {"id": "s-1", "fact": "likes tea"}
  ],
  "name": "Sarah Chen",
  "created": "2025-12-01"
}
"""
    doc = parse_items(source.encode())
    assert doc.list_key == "facts"
    assert doc.wrapper == {
        "entity": "sarah",
        "type": "person",
        "name": "Sarah Chen",
        "created": "2025-12-01",
    }
    assert list(doc.wrapper) == ["entity", "type", "name", "created"]
    assert [entry.value for entry in doc.entries] == [{"id": "s-1", "fact": "likes tea"}]
    open_pos, close = doc.list_span
    assert doc.text[open_pos : close + 1] == '[\n    {"id": "s-1", "fact": "likes tea"}\n  ]'


def test_wrapper_with_items() -> None:
    doc = parse_items(b'{"items": [{"fact": "a"}, 3, "loose"], "version": 2}')
    assert doc.list_key == "items"
    assert doc.wrapper == {"version": 2}
    assert [entry.value for entry in doc.entries] == [{"fact": "a"}, 3, "loose"]
    assert [doc.text[slice(*span)] for span in doc.spans] == ['{"fact": "a"}', "3", '"loose"']


def test_wrapper_with_single_custom_list_key() -> None:
    doc = parse_items(b'{"entity": "x", "tags": [], "memories": [{"fact": "a"}], "aliases": ["x"]}')
    assert doc.list_key == "memories"
    assert doc.wrapper == {"entity": "x", "tags": [], "aliases": ["x"]}


def test_duplicate_list_key_uses_the_one_json_loads_keeps() -> None:
    source = '{"facts": [{"old": 1}], "facts": [{"new": 2}]}'
    doc = parse_items(source.encode())
    assert [entry.value for entry in doc.entries] == [{"new": 2}]
    assert doc.list_span == (source.rindex("["), source.rindex("]"))


def test_empty_list() -> None:
    doc = parse_items(b"[]")
    assert doc.entries == ()
    assert doc.list_span == (0, 1)


# --- encodings and formatting -------------------------------------------------------------------------


def test_bom_is_stripped_and_kept_on_write() -> None:
    data = BOM + b'[{"id": "a", "status": "active"}]'
    doc = parse_items(data)
    assert doc.bom is True
    assert doc.text == '[{"id": "a", "status": "active"}]'
    assert apply_edits(doc, []) == data
    assert apply_edits(doc, [SetFields(0, {"status": "done"})]) == BOM + b'[{"id": "a", "status": "done"}]'


def test_crlf_is_detected_and_used_for_new_lines() -> None:
    data = SMALL.replace("\n", "\r\n").encode()
    doc = parse_items(data)
    assert doc.newline == "\r\n"
    assert doc.indent_unit == "    "
    out = apply_edits(doc, [SetFields(1, {"status": "active"})])
    expected = SMALL.replace('"fact": "two"', '"fact": "two",\n        "status": "active"')
    assert out == expected.replace("\n", "\r\n").encode()


def test_dominant_newline_wins() -> None:
    doc = parse_items(b"[\r\n  1,\n  2,\n  3\n]")
    assert doc.newline == "\n"


def test_no_trailing_newline_is_preserved() -> None:
    source = SMALL.rstrip("\n")
    out = edit_text(source, DeleteEntry(2), AppendEntry({"id": "d"}))
    assert out == source.replace(
        '{\n        "id": "c",\n        "fact": "three"\n    }',
        '{\n        "id": "d"\n    }',
    )
    assert not out.endswith("\n")


def test_tabs_are_detected_and_used_for_appends() -> None:
    source = '[\n\t{\n\t\t"id": "a",\n\t\t"tags": ["x", "y"]\n\t}\n]\n'
    doc = parse_items(source.encode())
    assert doc.indent_unit == "\t"
    out = apply_edits(doc, [AppendEntry({"id": "b", "meta": {"n": 1}})]).decode()
    assert out == (
        '[\n\t{\n\t\t"id": "a",\n\t\t"tags": ["x", "y"]\n\t},\n'
        '\t{\n\t\t"id": "b",\n\t\t"meta": {\n\t\t\t"n": 1\n\t\t}\n\t}\n]\n'
    )


def test_ensure_ascii_file_gets_escaped_new_text() -> None:
    source = '[\n  {\n    "fact": "\\u5f20\\u4f1f likes tea"\n  }\n]\n'
    doc = parse_items(source.encode())
    assert doc.ensure_ascii is True
    assert doc.entries[0].value == {"fact": "张伟 likes tea"}
    out = apply_edits(doc, [SetFields(0, {"note": "北京"})]).decode()
    assert out == '[\n  {\n    "fact": "\\u5f20\\u4f1f likes tea",\n    "note": "\\u5317\\u4eac"\n  }\n]\n'


def test_raw_chinese_file_gets_raw_new_text() -> None:
    source = '[\n  {\n    "fact": "张伟喜欢喝茶"\n  }\n]\n'
    doc = parse_items(source.encode())
    assert doc.ensure_ascii is False
    assert doc.entries[0].value == {"fact": "张伟喜欢喝茶"}
    out = apply_edits(doc, [SetFields(0, {"fact": "张伟喜欢咖啡"})])
    assert out == '[\n  {\n    "fact": "张伟喜欢咖啡"\n  }\n]\n'.encode()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('["\\u5f20", "张"]', False),  # mixed: raw text wins
        ('["plain", "\\u0041"]', False),  # escapes, but only of ASCII
        ('["\\\\u5f20"]', False),  # an escaped backslash followed by text, not an escape
        ('["\\\\\\u5f20"]', True),  # escaped backslash, then a real escape
        ('["\\ud83d\\ude00"]', True),  # surrogate pair for an emoji
    ],
)
def test_ensure_ascii_detection(source: str, expected: bool) -> None:
    assert parse_items(source.encode()).ensure_ascii is expected


@pytest.mark.parametrize(
    ("source", "unit"),
    [
        ("[1]", "  "),
        ('[\n {\n  "a": 1\n }\n]', " "),
        ('{\n    "facts": [\n        {}\n    ]\n}', "    "),
        ('[\n\t{\n\t\t"a": 1\n\t}\n]', "\t"),
    ],
)
def test_indent_detection(source: str, unit: str) -> None:
    assert parse_items(source.encode()).indent_unit == unit


def test_lone_surrogate_value_is_written_as_escape() -> None:
    doc = parse_items('[{"fact": "张"}]'.encode())
    out = apply_edits(doc, [SetFields(0, {"odd": "x\ud800y"})])
    assert out == '[{"fact": "张", "odd": "x\\ud800y"}]'.encode()
    assert json.loads(out) == [{"fact": "张", "odd": "x\ud800y"}]


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b" \r\n\t\n", "empty file"),
        (BOM, "empty file"),
        (b'[\n  {"a": 1}\n  {"b": 2}\n]', "not valid JSON: line 3 column 3: Expecting ',' delimiter"),
        (b"[1, 2", "not valid JSON: line 1 column 6: Expecting ',' delimiter"),
        (b"[1] [2]", "not valid JSON: line 1 column 5: Extra data"),
        (b'["ok", "\xff"]', "not valid UTF-8 (byte 0xff at offset 8)"),
        (BOM + b'["\xc3"]', "not valid UTF-8 (byte 0xc3 at offset 5)"),
        (b"[" * 5000 + b"]" * 5000, "JSON nested too deeply"),
        (b"42", "top level is a number, expected a list of facts or an object holding one"),
        (b'"facts"', "top level is a string, expected a list of facts or an object holding one"),
        (b"null", "top level is null, expected a list of facts or an object holding one"),
        (b'{"facts": "x"}', "'facts' is a string, expected a list"),
        (b'{"items": {"a": 1}}', "'items' is an object, expected a list"),
        (b'{"facts": [], "items": []}', "both 'facts' and 'items' are present, expected only one"),
        (b'{"entity": "x", "tags": ["a"]}', "object has no 'facts' or 'items' list"),
        (
            b'{"a": [{}], "b": [{}]}',
            "no 'facts' or 'items' key, and several keys hold lists of objects: 'a', 'b'",
        ),
    ],
)
def test_errors(data: bytes, message: str) -> None:
    with pytest.raises(ItemsError) as caught:
        parse_items(data)
    assert str(caught.value) == message


def test_stdlib_limits_are_reported_as_invalid_json() -> None:
    with pytest.raises(ItemsError, match=r"^not valid JSON: Exceeds the limit \(4300 digits\)"):
        parse_items(b"[" + b"1" * 5000 + b"]")


def test_bad_edit_targets() -> None:
    doc = parse_items(b'[{"a": 1}, "loose"]')
    with pytest.raises(IndexError, match="no entry 2: the list has 2"):
        apply_edits(doc, [DeleteEntry(2)])
    with pytest.raises(IndexError):
        apply_edits(doc, [SetFields(-1, {"a": 2})])
    with pytest.raises(ValueError, match="entry 1 is a string, not an object with fields"):
        apply_edits(doc, [SetFields(1, {"a": 2})])


# --- small edits, byte for byte -----------------------------------------------------------------------


def test_no_edits_returns_original_bytes() -> None:
    data = BOM + THREE_FACTS.replace("\n", "\r\n").rstrip().encode()
    assert apply_edits(parse_items(data), []) == data


def test_changing_status_changes_exactly_that_line() -> None:
    out = edit_text(THREE_FACTS, SetFields(1, {"status": "superseded"}))
    assert changed_lines(THREE_FACTS, out) == ['-    "status": "active",', '+    "status": "superseded",']
    assert out == THREE_FACTS.replace(
        '"Sarah prefers tea",\n    "category": "preference",\n    "timestamp": "2026-01-16",\n'
        '    "source": "conversation",\n    "status": "active"',
        '"Sarah prefers tea",\n    "category": "preference",\n    "timestamp": "2026-01-16",\n'
        '    "source": "conversation",\n    "status": "superseded"',
    )


def test_setting_an_unchanged_value_leaves_its_formatting() -> None:
    source = '[\n  {\n    "tags": ["a","b"],\n    "n": 1\n  }\n]\n'
    assert edit_text(source, SetFields(0, {"tags": ["a", "b"], "n": 1})) == source
    assert edit_text(source, SetFields(0, {"n": True})) == source.replace('"n": 1', '"n": true')
    assert edit_text(source, SetFields(0, {"n": 1.0})) == source.replace('"n": 1', '"n": 1.0')


def test_setting_a_container_value_is_inline() -> None:
    out = edit_text(THREE_FACTS, SetFields(0, {"supersededBy": ["sarah-004", {"why": "moved"}]}))
    assert changed_lines(THREE_FACTS, out) == [
        '-    "supersededBy": null',
        '+    "supersededBy": ["sarah-004", {"why": "moved"}]',
    ]


def test_adding_a_key_appends_a_line_with_member_indent() -> None:
    out = edit_text(THREE_FACTS, SetFields(2, {"confidence": 0.9}))
    assert changed_lines(THREE_FACTS, out) == [
        '-    "supersededBy": null',
        '+    "supersededBy": null,',
        '+    "confidence": 0.9',
    ]


def test_adding_keys_to_one_line_and_empty_objects() -> None:
    source = '[\n  {"id": "a"},\n  {},\n  {"id": "c"}\n]\n'
    out = edit_text(source, SetFields(0, {"x": 1, "y": [1, 2]}), SetFields(1, {"id": "b", "z": None}))
    assert out == (
        '[\n  {"id": "a", "x": 1, "y": [1, 2]},\n  {\n    "id": "b",\n    "z": null\n  },\n  {"id": "c"}\n]\n'
    )
    assert edit_text("[{}, { }]", SetFields(1, {"k": "v"})) == '[{}, {"k": "v"}]'


def test_duplicate_keys_edit_the_one_json_loads_keeps() -> None:
    source = '[{"s": 1, "t": 0, "s": 2}]'
    assert edit_text(source, SetFields(0, {"s": 3})) == '[{"s": 1, "t": 0, "s": 3}]'
    assert edit_text(source, RemoveFields(0, ("s",))) == '[{"t": 0}]'


def test_removing_a_key_drops_its_line() -> None:
    out = edit_text(THREE_FACTS, RemoveFields(0, ("source",)))
    assert changed_lines(THREE_FACTS, out) == ['-    "source": "conversation",']


def test_removing_the_last_key_moves_the_comma() -> None:
    out = edit_text(THREE_FACTS, RemoveFields(1, ("supersededBy",)))
    assert changed_lines(THREE_FACTS, out) == [
        '-    "status": "active",',
        '-    "supersededBy": null',
        '+    "status": "active"',
    ]


def test_removing_keys_inline_and_missing() -> None:
    source = '[{"a": 1, "b": 2, "c": 3, "d": 4}]\n'
    assert edit_text(source, RemoveFields(0, ("b", "c", "nope"))) == '[{"a": 1, "d": 4}]\n'
    assert edit_text(source, RemoveFields(0, ("a", "d"))) == '[{"b": 2, "c": 3}]\n'
    assert edit_text(source, RemoveFields(0, ("a", "b", "c", "d"))) == "[{}]\n"
    assert edit_text(source, RemoveFields(0, ("nope",))) == source


def test_remove_then_set_on_one_entry_compound() -> None:
    out = edit_text(SMALL, RemoveFields(0, ("fact",)), SetFields(0, {"fact": "uno", "n": 1}))
    assert out == SMALL.replace(
        '"id": "a",\n        "fact": "one"', '"id": "a",\n        "fact": "uno",\n        "n": 1'
    )


def test_deleting_first_entry() -> None:
    out = edit_text(SMALL, DeleteEntry(0))
    assert out == SMALL.replace('    {\n        "id": "a",\n        "fact": "one"\n    },\n', "")
    assert out.startswith('[\n    {\n        "id": "b",')


def test_deleting_middle_entry() -> None:
    out = edit_text(SMALL, DeleteEntry(1))
    assert out == SMALL.replace('    {\n        "id": "b",\n        "fact": "two"\n    },\n', "")
    assert len(changed_lines(SMALL, out)) == 4


def test_deleting_last_entry() -> None:
    out = edit_text(SMALL, DeleteEntry(2))
    assert out == SMALL.replace(',\n    {\n        "id": "c",\n        "fact": "three"\n    }', "")
    assert out.endswith('"fact": "two"\n    }\n]\n')


def test_deleting_everything_collapses_the_list() -> None:
    assert edit_text(SMALL, DeleteEntry(0), DeleteEntry(1), DeleteEntry(2)) == "[]\n"
    wrapped = '{\n  "entity": "sarah",\n  "facts": [\n    {"id": "a"}\n  ]\n}'
    assert edit_text(wrapped, DeleteEntry(0)) == '{\n  "entity": "sarah",\n  "facts": []\n}'


def test_deleting_neighbours_and_inline_entries() -> None:
    source = "[1, 2, 3, 4, 5]"
    assert edit_text(source, DeleteEntry(1), DeleteEntry(2)) == "[1, 4, 5]"
    assert edit_text(source, DeleteEntry(3), DeleteEntry(4)) == "[1, 2, 3]"
    assert edit_text(source, DeleteEntry(0), DeleteEntry(2), DeleteEntry(4)) == "[2, 4]"
    mixed = "[\n  1, 2,\n  3\n]"
    assert edit_text(mixed, DeleteEntry(1)) == "[\n  1,\n  3\n]"
    assert edit_text(mixed, DeleteEntry(0)) == "[\n  2,\n  3\n]"


def test_delete_wins_over_field_edits() -> None:
    assert edit_text("[{}, {}]", SetFields(0, {"a": 1}), DeleteEntry(0), DeleteEntry(0)) == "[{}]"


def test_appending_to_non_empty_list() -> None:
    out = edit_text(SMALL, AppendEntry({"id": "d", "tags": ["x"]}), AppendEntry({"id": "e"}))
    assert out == SMALL.replace(
        '"fact": "three"\n    }\n]',
        '"fact": "three"\n    },\n    {\n        "id": "d",\n        "tags": [\n            "x"\n        ]\n'
        '    },\n    {\n        "id": "e"\n    }\n]',
    )


def test_appending_to_empty_lists() -> None:
    assert edit_text("[]\n", AppendEntry({"id": "a", "fact": "x"})) == (
        '[\n  {\n    "id": "a",\n    "fact": "x"\n  }\n]\n'
    )
    wrapped = '{\n    "entity": "sarah",\n    "facts": [ ]\n}'
    assert edit_text(wrapped, AppendEntry({"id": "a"}), AppendEntry({"id": "b"})) == (
        '{\n    "entity": "sarah",\n    "facts": [\n        {\n            "id": "a"\n        },\n'
        '        {\n            "id": "b"\n        }\n    ]\n}'
    )


def test_appending_after_deleting_the_last_entry() -> None:
    out = edit_text(SMALL, DeleteEntry(2), AppendEntry({"id": "z"}))
    assert changed_lines(SMALL, out) == [
        '-        "id": "c",',
        '-        "fact": "three"',
        '+        "id": "z"',
    ]


def test_appending_to_inline_and_hugging_lists() -> None:
    assert edit_text('[{"a": 1}]', AppendEntry({"b": [2]})) == '[{"a": 1}, {"b": [2]}]'
    hugging = '[{\n  "a": 1\n}, {\n  "b": 2\n}]'
    assert edit_text(hugging, AppendEntry({"c": 3})) == '[{\n  "a": 1\n}, {\n  "b": 2\n}, {\n  "c": 3\n}]'


def test_inline_array_elsewhere_stays_byte_identical() -> None:
    source = """\
{
  "entity": "sarah",
  "aliases": ["S", "Sally",   "Ms. Chen"],
  "facts": [
    {
      "id": "s-1",
      "tags": ["work","acme"],
      "status": "active"
    },
    {
      "id": "s-2",
      "tags": [ "tea" ],
      "status": "active"
    }
  ]
}
"""
    out = edit_text(
        source,
        SetFields(0, {"status": "superseded"}),
        RemoveFields(1, ("status",)),
        AppendEntry({"id": "s-3", "tags": ["x"]}),
    )
    assert '"aliases": ["S", "Sally",   "Ms. Chen"],' in out
    assert '"tags": ["work","acme"],' in out
    assert '"tags": [ "tea" ]\n' in out
    assert (
        out
        == """\
{
  "entity": "sarah",
  "aliases": ["S", "Sally",   "Ms. Chen"],
  "facts": [
    {
      "id": "s-1",
      "tags": ["work","acme"],
      "status": "superseded"
    },
    {
      "id": "s-2",
      "tags": [ "tea" ]
    },
    {
      "id": "s-3",
      "tags": [
        "x"
      ]
    }
  ]
}
"""
    )


def test_new_items_file() -> None:
    data = new_items_file([{"id": "a", "fact": "张伟"}, {"id": "b", "tags": []}])
    expected = '[\n  {\n    "id": "a",\n    "fact": "张伟"\n  },\n  {\n    "id": "b",\n    "tags": []\n  }\n]\n'
    assert data == expected.encode()
    assert new_items_file([]) == b"[]\n"


# --- property: edits always parse back to the intended value ------------------------------------------

KEYS = st.sampled_from(["id", "fact", "status", "timestamp", "supersededBy", "tags"]) | st.text(max_size=4)
TEXT = st.text(
    alphabet=st.sampled_from(['"', "\\", "\n", "\t", "/", "a", " ", "é", "张", "😀", "\u2028"]) | st.characters(),
    max_size=8,
)
SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(10**15), max_value=10**15) | st.floats(allow_nan=False) | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=6,
)
FACTS = st.dictionaries(KEYS, VALUES, max_size=5)
ELEMENTS = st.lists(FACTS | SCALARS, max_size=5)


def canonical(value: Any) -> str:
    """Order- and type-sensitive equality: Python's == would accept 1 for true and reordered keys."""
    return json.dumps(value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    elements=ELEMENTS,
    shape=st.sampled_from(["bare", "facts", "items"]),
    indent=st.sampled_from([None, 1, 2, 4, "\t"]),
    compact=st.booleans(),
    ensure_ascii=st.booleans(),
    crlf=st.booleans(),
    bom=st.booleans(),
    trailing_newline=st.booleans(),
    data=st.data(),
)
def test_edits_parse_back_to_intended_value(
    elements: list[Any],
    shape: str,
    indent: int | str | None,
    compact: bool,
    ensure_ascii: bool,
    crlf: bool,
    bom: bool,
    trailing_newline: bool,
    data: st.DataObject,
) -> None:
    top: Any = elements if shape == "bare" else {"entity": "x", shape: elements, "created": "2026"}
    text = json.dumps(top, indent=indent, ensure_ascii=ensure_ascii, separators=(",", ":") if compact else None)
    # A real file can only spell a lone surrogate as an escape; raw, it would not encode as UTF-8.
    text = re.sub("[\ud800-\udfff]", lambda match: f"\\u{ord(match.group()):04x}", text)
    if crlf:
        text = text.replace("\n", "\r\n")
    if trailing_newline:
        text += "\r\n" if crlf else "\n"
    original = (BOM if bom else b"") + text.encode()
    doc = parse_items(original)
    assert apply_edits(doc, []) == original
    assert canonical([entry.value for entry in doc.entries]) == canonical(elements)

    objects = [i for i, value in enumerate(elements) if isinstance(value, dict)]
    field_edit = st.sampled_from(objects).flatmap(
        lambda i: (
            st.builds(SetFields, st.just(i), st.dictionaries(KEYS, VALUES, max_size=3))
            | st.builds(
                RemoveFields,
                st.just(i),
                st.lists(st.sampled_from([*elements[i], "missing"]), max_size=3).map(tuple),
            )
        )
    )
    edit_strategies = [st.builds(AppendEntry, FACTS)]
    if elements:
        edit_strategies.append(st.builds(DeleteEntry, st.integers(0, len(elements) - 1)))
    if objects:
        edit_strategies.append(field_edit)
    edits = data.draw(st.lists(st.one_of(edit_strategies), max_size=6))

    deleted = {edit.index for edit in edits if isinstance(edit, DeleteEntry)}
    expected = [json.loads(json.dumps(value)) for value in elements]
    for edit in edits:
        if isinstance(edit, SetFields):
            expected[edit.index].update(edit.values)
        elif isinstance(edit, RemoveFields):
            for key in edit.keys:
                expected[edit.index].pop(key, None)
    expected = [value for i, value in enumerate(expected) if i not in deleted]
    expected += [edit.value for edit in edits if isinstance(edit, AppendEntry)]

    out = apply_edits(doc, edits)
    assert out.startswith(BOM) is bom
    result_text = out.decode("utf-8-sig")
    result = json.loads(result_text)
    if shape == "bare":
        assert canonical(result) == canonical(expected)
    else:
        assert canonical(result) == canonical({"entity": "x", shape: expected, "created": "2026"})
    open_pos, close = doc.list_span
    assert result_text.startswith(doc.text[: open_pos + 1])
    assert result_text.endswith(doc.text[close:])
    if not crlf:
        assert "\r" not in result_text
    if doc.ensure_ascii:
        assert result_text.isascii()
