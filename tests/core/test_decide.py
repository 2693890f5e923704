"""The pure decision per unit, and the mergers it calls when both sides changed.

``decide(base, memory, vault, same, merge)`` is checked against an explicit table of every combination of
(absent, same as base, changed to A, changed to B) on each side, with and without a base, then by property:
the result is always one side's value or the merge's, and a side's change is lost only where the design says
so (a deletion yields to an edit) or a conflict keeps it in a copy.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.core.decide import UNKNOWN, Decision, Outcome, decide
from vaultsync.core.merge import merge_entities, merge_records, merge_text, union_text
from vaultsync.core.units import ENTITY, FACT, FILE, same
from vaultsync.model import EntityContent

SAME, CONVERGED, TO_VAULT, TO_MEMORY, MERGED, CONFLICT, SKIP = (
    Outcome.SAME,
    Outcome.CONVERGED,
    Outcome.TO_VAULT,
    Outcome.TO_MEMORY,
    Outcome.MERGED,
    Outcome.CONFLICT,
    Outcome.SKIP,
)
MERGE_RESULT = "merge-result"


class MergeStub:
    """A merge that records its calls; ``clash`` makes it report a conflict (keeping memory, as merge.py does)."""

    def __init__(self, clash: str = "") -> None:
        self.clash = clash
        self.calls: list[tuple[Any, Any, Any]] = []

    def __call__(self, base: Any, memory: Any, vault: Any) -> tuple[Any, str]:
        self.calls.append((base, memory, vault))
        return (memory if self.clash else MERGE_RESULT), self.clash


def eq(a: Any, b: Any) -> bool:
    return a == b


def value_of(symbol: str, base_present: bool) -> Any:
    return {"absent": None, "base": "o" if base_present else None, "A": "a", "B": "b"}[symbol]


# (base present?, memory, vault) -> (outcome, result). "base" means "as in the base", which is "absent" when
# there is no base. "merge" is whatever the merge function returns.
TABLE: list[tuple[bool, str, str, Outcome, str]] = [
    # base present
    (True, "absent", "absent", CONVERGED, "absent"),  # both deleted it
    (True, "absent", "base", TO_VAULT, "absent"),  # memory deleted: the vault note goes
    (True, "absent", "A", TO_MEMORY, "A"),  # memory deleted, vault edited: the edit wins
    (True, "absent", "B", TO_MEMORY, "B"),
    (True, "base", "absent", TO_MEMORY, "absent"),  # the person deleted the note
    (True, "base", "base", SAME, "base"),
    (True, "base", "A", TO_MEMORY, "A"),
    (True, "base", "B", TO_MEMORY, "B"),
    (True, "A", "absent", TO_VAULT, "A"),  # vault deleted, memory edited: the edit wins
    (True, "A", "base", TO_VAULT, "A"),
    (True, "A", "A", CONVERGED, "A"),
    (True, "A", "B", MERGED, "merge"),
    (True, "B", "absent", TO_VAULT, "B"),
    (True, "B", "base", TO_VAULT, "B"),
    (True, "B", "A", MERGED, "merge"),
    (True, "B", "B", CONVERGED, "B"),
    # no base: "base" is the same as "absent"
    (False, "absent", "absent", SAME, "absent"),
    (False, "absent", "base", SAME, "absent"),
    (False, "absent", "A", TO_MEMORY, "A"),  # the person created it
    (False, "absent", "B", TO_MEMORY, "B"),
    (False, "base", "absent", SAME, "absent"),
    (False, "base", "base", SAME, "absent"),
    (False, "base", "A", TO_MEMORY, "A"),
    (False, "base", "B", TO_MEMORY, "B"),
    (False, "A", "absent", TO_VAULT, "A"),  # the agent created it
    (False, "A", "base", TO_VAULT, "A"),
    (False, "A", "A", CONVERGED, "A"),  # both created the same content
    (False, "A", "B", MERGED, "merge"),  # both created it differently: merged without a base
    (False, "B", "absent", TO_VAULT, "B"),
    (False, "B", "base", TO_VAULT, "B"),
    (False, "B", "A", MERGED, "merge"),
    (False, "B", "B", CONVERGED, "B"),
]


def test_table_covers_every_combination() -> None:
    symbols = ("absent", "base", "A", "B")
    wanted = {(b, m, v) for b in (True, False) for m in symbols for v in symbols}
    assert {(b, m, v) for b, m, v, _, _ in TABLE} == wanted
    assert len(TABLE) == len(wanted)


@pytest.mark.parametrize(
    ("base_present", "mem", "vault", "outcome", "result"),
    TABLE,
    ids=[f"{'base' if b else 'nobase'}-m_{m}-v_{v}" for b, m, v, _, _ in TABLE],
)
def test_decide_table(base_present: bool, mem: str, vault: str, outcome: Outcome, result: str) -> None:
    base = "o" if base_present else None
    m, v = value_of(mem, base_present), value_of(vault, base_present)
    merge = MergeStub()

    decision = decide(base, m, v, eq, merge)

    assert decision.outcome is outcome
    expected = MERGE_RESULT if result == "merge" else value_of(result, base_present)
    assert decision.result == expected
    if result == "merge":
        assert merge.calls == [(base, m, v)]
        assert decision.detail == ""
    else:
        assert merge.calls == [], "merge was called for a unit only one side changed"


@pytest.mark.parametrize(
    ("base_present", "mem", "vault"),
    [(b, m, v) for b, m, v, outcome, _ in TABLE if outcome is MERGED],
)
def test_decide_conflict_keeps_memory(base_present: bool, mem: str, vault: str) -> None:
    base = "o" if base_present else None
    m, v = value_of(mem, base_present), value_of(vault, base_present)
    merge = MergeStub(clash="both sides changed category")

    decision = decide(base, m, v, eq, merge)

    assert decision == Decision(CONFLICT, m, "both sides changed category")
    assert merge.calls == [(base, m, v)]


@pytest.mark.parametrize("base", [None, "o"])
@pytest.mark.parametrize("other", [None, "o", "a", UNKNOWN])
@pytest.mark.parametrize("unknown_side", ["memory", "vault"])
def test_unknown_side_skips(base: Any, other: Any, unknown_side: str) -> None:
    merge = MergeStub()
    m, v = (UNKNOWN, other) if unknown_side == "memory" else (other, UNKNOWN)

    decision = decide(base, m, v, eq, merge)

    assert decision.outcome is SKIP
    assert decision.result == base
    assert merge.calls == []


def test_same_compares_records_as_values_not_text() -> None:
    fact_same = same(FACT)
    a = {"id": "sarah-chen-004", "status": "active", "tags": ["x", "y"]}
    b = {"tags": ["x", "y"], "status": "active", "id": "sarah-chen-004"}
    assert decide(a, b, dict(a), fact_same, MergeStub()).outcome is SAME
    assert not fact_same(a, None) and not fact_same(None, a) and fact_same(None, None)
    assert not fact_same({"n": 1}, {"n": True}), "1 and true are different JSON values"
    assert not fact_same({"n": "1"}, {"n": 1})
    assert same(ENTITY)(EntityContent({"a": 1}, "x\n"), EntityContent({"a": 1}, "x\n"))
    assert not same(ENTITY)(EntityContent({"a": 1}, "x\n"), EntityContent({"a": 1}, "x"))
    assert not same(FILE)(b"x\n", b"x\r\n")


# -- properties ---------------------------------------------------------------------------------------------
values = st.one_of(st.none(), st.sampled_from(["o", "a", "b", "c"]))


@settings(max_examples=300, deadline=None)
@given(base=values, memory=values, vault=values, clash=st.booleans())
def test_decide_never_loses_a_change_outside_a_conflict(base: Any, memory: Any, vault: Any, clash: bool) -> None:
    merge = MergeStub("clash" if clash else "")
    decision = decide(base, memory, vault, eq, merge)
    result = decision.result

    assert result in (memory, vault) or (result == MERGE_RESULT and decision.outcome in (MERGED, CONFLICT))
    both_edited = memory != base and vault != base and memory != vault
    assert bool(merge.calls) == (both_edited and memory is not None and vault is not None)
    assert (decision.outcome is CONFLICT) == (bool(merge.calls) and clash)
    assert (decision.outcome is SAME) == (memory == vault == base)
    if decision.outcome is CONFLICT:
        assert result == memory and decision.detail
        return
    for side, other in ((memory, vault), (vault, memory)):
        if side == base:
            continue
        if side is not None:
            # An edit (or creation) on this side is what both sides hold, or part of the merge.
            assert result == side or (decision.outcome is MERGED and result == MERGE_RESULT)
        else:
            # A deletion is carried out, unless the other side edited the unit (an edit beats a delete).
            assert result is None or (other != base and result == other)


@settings(max_examples=200, deadline=None)
@given(base=values, memory=values, vault=values)
def test_decide_is_symmetric(base: Any, memory: Any, vault: Any) -> None:
    mirror = {TO_VAULT: TO_MEMORY, TO_MEMORY: TO_VAULT}
    one = decide(base, memory, vault, eq, MergeStub())
    other = decide(base, vault, memory, eq, MergeStub())
    assert other.outcome is mirror.get(one.outcome, one.outcome)
    assert other.result == one.result


# -- merge_records ---------------------------------------------------------------------------------------------
FACT_BASE = {
    "id": "sarah-chen-004",
    "fact": "Sarah Chen prefers a written agenda the day before any meeting",
    "category": "preference",
    "timestamp": "2026-10-21",
    "source": "conversation",
    "status": "active",
    "supersededBy": None,
}


def edited(record: dict[str, Any], drop: tuple[str, ...] = (), **values: Any) -> dict[str, Any]:
    out = {k: v for k, v in record.items() if k not in drop}
    out.update(values)
    return out


def test_merge_records_takes_each_sides_field() -> None:
    memory = edited(FACT_BASE, source="call on 2026-10-21")
    vault = edited(FACT_BASE, category="habit")
    merged, detail = merge_records(FACT_BASE, memory, vault)
    assert detail == ""
    assert merged == edited(FACT_BASE, source="call on 2026-10-21", category="habit")
    assert list(merged) == list(FACT_BASE), "the record's key order changed"


def test_merge_records_same_change_on_both_sides() -> None:
    both = edited(FACT_BASE, status="superseded", supersededBy="sarah-chen-006")
    assert merge_records(FACT_BASE, both, dict(both)) == (both, "")


def test_merge_records_clash_keeps_memory_value_and_names_the_field() -> None:
    memory = edited(FACT_BASE, category="routine")
    vault = edited(FACT_BASE, category="habit", source="Nora")
    merged, detail = merge_records(FACT_BASE, memory, vault)
    assert merged["category"] == "routine"
    assert merged["source"] == "Nora", "a field only the vault changed was lost in a conflict"
    assert detail == "both sides changed category"


def test_merge_records_added_and_removed_fields() -> None:
    memory = edited(FACT_BASE, drop=("source",), lastAccessed="2026-12-01")
    vault = edited(FACT_BASE, status="superseded", supersededBy="sarah-chen-006")
    merged, detail = merge_records(FACT_BASE, memory, vault)
    assert detail == ""
    assert merged == edited(
        FACT_BASE, drop=("source",), lastAccessed="2026-12-01", status="superseded", supersededBy="sarah-chen-006"
    )
    assert list(merged)[-1] == "lastAccessed", "memory's keys come first, in memory's order"


def test_merge_records_edit_beats_removal_of_the_same_field() -> None:
    memory = edited(FACT_BASE, drop=("category",))
    vault = edited(FACT_BASE, category="habit")
    assert merge_records(FACT_BASE, memory, vault) == (vault, "")
    assert merge_records(FACT_BASE, vault, memory) == (vault, "")


def test_merge_records_without_base() -> None:
    memory = {"id": "x-1", "fact": "Same text", "source": "agent"}
    vault = {"id": "x-1", "fact": "Same text", "category": "context"}
    merged, detail = merge_records(None, memory, vault)
    assert (merged, detail) == ({"id": "x-1", "fact": "Same text", "source": "agent", "category": "context"}, "")
    merged, detail = merge_records(None, memory, edited(vault, fact="Other text"))
    assert merged["fact"] == "Same text" and "fact" in detail


def test_merge_records_compares_json_values() -> None:
    base = {"id": "a", "count": 1, "tags": ["x", "y"]}
    memory = {"id": "a", "count": True, "tags": ["x", "y"]}  # 1 -> true is an edit, though 1 == True in Python
    vault = {"id": "a", "count": 1, "tags": ["x", "y", "z"]}
    merged, detail = merge_records(base, memory, vault)
    assert detail == ""
    assert merged == {"id": "a", "count": True, "tags": ["x", "y", "z"]}
    assert merged["count"] is True


MISSING = "<missing>"
field_values = st.sampled_from([MISSING, None, "o", "a", "b", 1, True])
record = st.dictionaries(st.sampled_from(["id", "fact", "category", "status"]), field_values, max_size=4).map(
    lambda d: {k: v for k, v in d.items() if v != MISSING}
)


@settings(max_examples=300, deadline=None)
@given(base=record, memory=record, vault=record)
def test_merge_records_properties(base: dict[str, Any], memory: dict[str, Any], vault: dict[str, Any]) -> None:
    merged, detail = merge_records(base, memory, vault)

    def get(d: dict[str, Any], k: str) -> Any:
        return (type(d[k]), d[k]) if k in d else MISSING

    clashed = set(detail.removeprefix("both sides changed ").split(", ")) if detail else set()
    expected_clashes = set()
    assert set(merged) <= set(memory) | set(vault)
    assert [k for k in merged if k in memory] == [k for k in memory if k in merged]
    for key in set(base) | set(memory) | set(vault):
        b, m, v, r = get(base, key), get(memory, key), get(vault, key), get(merged, key)
        if m == b:
            assert r == v, f"{key}: the vault's change was lost"
        elif v == b or m == v:
            assert r == m, f"{key}: memory's change was lost"
        elif MISSING in (m, v):
            assert r == (v if m == MISSING else m), f"{key}: an edit lost to a deletion"
        else:
            assert r == m, f"{key}: memory did not win a clash"
            expected_clashes.add(key)
    assert clashed == expected_clashes, "the conflict detail does not name exactly the clashing fields"


# -- merge_text ------------------------------------------------------------------------------------------------
SUMMARY = """\
# Sarah Chen

Sarah Chen is a hardware enginering manager at Acme Corp.
She leads Project Atlas.

## Key facts
- Role: hardware engineering manager
- Weekly check-in: Thursdays 10:30
"""


def test_merge_text_typo_fix_above_and_append_below() -> None:
    vault = SUMMARY.replace("enginering", "engineering")
    memory = SUMMARY + "- Presents the pilot results on 2026-12-10\n"
    merged, detail = merge_text(SUMMARY, memory, vault)
    assert detail == ""
    assert merged == vault + "- Presents the pilot results on 2026-12-10\n"


def test_merge_text_same_line_changed_differently_conflicts() -> None:
    memory = SUMMARY.replace("Thursdays 10:30", "Fridays 10:30")
    vault = SUMMARY.replace("Thursdays 10:30", "Thursdays 11:00")
    merged, detail = merge_text(SUMMARY, memory, vault)
    assert detail
    assert merged == memory, "on a conflict the memory side's text is kept, with no conflict markers"


def test_merge_text_same_change_on_both_sides_is_clean() -> None:
    both = SUMMARY.replace("Thursdays 10:30", "Fridays 10:30")
    assert merge_text(SUMMARY, both, both) == (both, "")


def test_merge_text_unicode_lines() -> None:
    base = "# 李伟\n\n工厂参观：2027-01-14 上午\n\n- 微信联系\n"  # noqa: RUF001 (Chinese full-width colon)
    memory = base + "- 样品已发出\n"
    vault = base.replace("上午", "上午 9:00")
    merged, detail = merge_text(base, memory, vault)
    assert (merged, detail) == (vault + "- 样品已发出\n", "")


def test_merge_text_without_base_is_a_union_in_order() -> None:
    memory = "# 2026-12-02\n\n- 08:40 Morning check: inbox quiet\n- 09:00 Sample batch in customs\n"
    vault = "# 2026-12-02\n\n- Call the framing shop\n"
    merged, detail = merge_text(None, memory, vault)
    assert detail == ""
    assert merged == (
        "# 2026-12-02\n\n- 08:40 Morning check: inbox quiet\n- 09:00 Sample batch in customs\n- Call the framing shop\n"
    )


def test_union_text_without_final_newline() -> None:
    assert union_text("a\nb", "a\nc\n") == "a\nb\nc\n"
    assert union_text("", "x\n") == "x\n"
    assert union_text("x\n", "") == "x\n"


lines = st.lists(st.sampled_from(["# day", "", "- a", "- b", "- c", "- 李伟", "text"]), max_size=8)


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(line in it for line in small)


@settings(max_examples=200, deadline=None)
@given(memory=lines, vault=lines)
def test_union_keeps_both_texts_in_order(memory: list[str], vault: list[str]) -> None:
    m = "".join(line + "\n" for line in memory)
    v = "".join(line + "\n" for line in vault)
    merged, detail = merge_text(None, m, v)
    assert detail == ""
    out = merged.splitlines()
    assert is_subsequence(memory, out) and is_subsequence(vault, out)
    assert len(out) <= len(memory) + len(vault)
    assert merge_text(None, m, m) == (m, "")


@settings(max_examples=60, deadline=None)
@given(base=lines, changed=lines)
def test_merge_text_one_sided_change_is_taken_exactly(base: list[str], changed: list[str]) -> None:
    b = "".join(line + "\n" for line in base)
    c = "".join(line + "\n" for line in changed)
    assert merge_text(b, b, c) == (c, "")
    assert merge_text(b, c, b) == (c, "")


# -- merge_entities -----------------------------------------------------------------------------------------
def test_merge_entities_merges_props_and_body() -> None:
    base = EntityContent({"aliases": ["Sarah Chen"]}, SUMMARY)
    memory = EntityContent({"aliases": ["Sarah Chen"], "team": "Connected Products"}, SUMMARY + "- New line\n")
    vault = EntityContent({"aliases": ["Sarah Chen", "Sarah"]}, SUMMARY.replace("enginering", "engineering"))
    merged, detail = merge_entities(base, memory, vault)
    assert detail == ""
    assert merged == EntityContent(
        {"aliases": ["Sarah Chen", "Sarah"], "team": "Connected Products"},
        SUMMARY.replace("enginering", "engineering") + "- New line\n",
    )


def test_merge_entities_conflict_keeps_memory() -> None:
    base = EntityContent({}, SUMMARY)
    memory = EntityContent({}, SUMMARY.replace("Thursdays 10:30", "Fridays 10:30"))
    vault = EntityContent({}, SUMMARY.replace("Thursdays 10:30", "Thursdays 11:00"))
    merged, detail = merge_entities(base, memory, vault)
    assert merged == memory and detail
