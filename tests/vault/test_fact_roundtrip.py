"""Property: a fact record rendered as a note and read back is the same record, values and JSON types alike.

This is the mapping's core promise: whatever an agent writes into items.json (any keys, any JSON values, text
that YAML would read as another type) survives the trip into Obsidian and back without a byte of meaning lost.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vaultsync.core.units import entity_style
from vaultsync.vault.notes import FACT_DERIVED, FactView, fact_record, read_fact_note, render_fact

AMBIGUOUS = ["yes", "no", "on", "off", "null", "~", "1e3", "0x1F", "0o17", "1_000", "2026-1-5", "10:30", "true"]
AMBIGUOUS += ["1234567890123456", "2026-01-15", ".inf", "- x", "[x]", "#tag", "a: b", "", " padded "]

text = st.one_of(st.sampled_from(AMBIGUOUS), st.text())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
keys = st.one_of(st.sampled_from(["category", "timestamp", "date", "source", "status", "tags"]), st.text(max_size=12))
records = st.fixed_dictionaries(
    {"id": st.from_regex(r"[a-z]{1,6}-[0-9]{3}", fullmatch=True), "fact": text},
    optional={"supersededBy": st.one_of(st.none(), text), "superseded_by": st.one_of(st.none(), text)},
).flatmap(lambda base: st.dictionaries(keys, values, max_size=6).map(lambda extra: {**base, **extra}))

VIEW = FactView("[[sarah|Sarah]]", ("[[acme-corp|Acme Corp]]",), lambda fact_id: None)


def typed(value: Any) -> Any:
    """A form in which 1, 1.0 and True differ, so the comparison is on JSON types as well as values."""
    return json.dumps(value, sort_keys=True)


@settings(max_examples=300, deadline=None)
@given(records)
def test_render_then_read_back_is_the_same_record(record: dict[str, Any]) -> None:
    props, body = read_fact_note(render_fact(record, VIEW))
    back = fact_record(props, body, record, {})
    assert typed(back) == typed(record)
    assert list(back) == list(record)


@settings(max_examples=200, deadline=None)
@given(records)
def test_derived_properties_never_reach_the_record(record: dict[str, Any]) -> None:
    """``entity`` and ``mentions`` are shown in the note but belong to the vault: reading back drops them,
    unless the agent's fact has a key of that name of its own, which is then kept as it was."""
    props, body = read_fact_note(render_fact(record, VIEW))
    back = fact_record(props, body, record, {})
    for name in FACT_DERIVED:
        assert (name in back) == (name in record)


@settings(max_examples=200, deadline=None)
@given(records)
def test_without_a_base_values_and_types_still_come_back(record: dict[str, Any]) -> None:
    """A vault adopted with no sync state (the base lost) still reads each value with its JSON type; key names
    follow the entity's style (``date``, ``superseded_by``) as they do for a note the person creates."""
    assume(not ({"date", "timestamp"} <= set(record) or {"supersededBy", "superseded_by"} <= set(record)))
    assume(not set(FACT_DERIVED) & set(record))
    # The extra keys may replace ``fact`` with any value; the trailing-newline rule is about a text one.
    fact = record["fact"]
    assume(isinstance(fact, str) and fact == fact.rstrip("\r\n"))
    props, body = read_fact_note(render_fact(record, VIEW))
    back = fact_record(props, body, None, entity_style([record]))
    shown = {k: v for k, v in record.items() if not (k in ("supersededBy", "superseded_by") and v is None)}
    assert typed(back) == typed(shown)
