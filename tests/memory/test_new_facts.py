"""A fact added by a program takes the shape of the file it joins: its key names and order, its layout, its
id pattern, and a date that is one (``memory/new_facts.py``, ``memory/items_edit.py``)."""

from __future__ import annotations

import json
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.memory.items import parse_items
from vaultsync.memory.items_edit import AppendEntry, apply_edits
from vaultsync.memory.new_facts import BadField, check_date, new_facts, own_spelling

DAY = date(2026, 12, 1)


def test_a_new_fact_uses_the_files_own_keys_and_their_order() -> None:
    held = [{"fact": "Bo plays chess", "id": "bo-001", "date": "2026-10-01", "superseded_by": None}]
    made = new_facts("bo", held, [("Bo learns Go", {"timestamp": "2026-11-20", "supersededBy": "x"}, DAY)], [])
    assert made == [
        {"fact": "Bo learns Go", "id": "bo-002", "date": "2026-11-20", "superseded_by": "x", "status": "active"}
    ]
    assert list(made[0]) == ["fact", "id", "date", "superseded_by", "status"]
    default = new_facts("bo", held, [("Bo naps", {}, DAY)], [])[0]
    assert default["date"] == "2026-12-01" and "timestamp" not in default
    contract = new_facts("bo", [{"id": "b1", "timestamp": "2026-01-01"}], [("t", {"date": "2026-02-02"}, DAY)], [])
    assert contract[0]["timestamp"] == "2026-02-02" and "date" not in contract[0]
    with pytest.raises(BadField, match="given twice"):
        new_facts("bo", held, [("t", {"date": "2026-02-02", "timestamp": "2026-02-03"}, DAY)], [])


def test_a_file_that_uses_both_spellings_keeps_what_was_given() -> None:
    held = [{"id": "k1", "timestamp": "2026-01-01", "date": "2026-03-03"}]
    made = new_facts("k", held, [("Kim flies", {"date": "2026-05-05"}, DAY)], [])[0]
    assert made["date"] == "2026-05-05" and made["timestamp"] == "2026-12-01"


@pytest.mark.parametrize("good", ["2026-12-01", "2026-12-01T09:30:00", "2026-12-01T09:30:00+01:00", " 2026-12-01 "])
def test_dates_that_are_dates(good: str) -> None:
    assert check_date(good, "timestamp") == good.strip()


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "12/01/2026", "", 20261201, None, "2026-12-01 lunch"])
def test_dates_that_are_not(bad: object) -> None:
    with pytest.raises(BadField) as refused:
        check_date(bad, "timestamp")
    assert refused.value.field == "timestamp" and "YYYY-MM-DD" in refused.value.message


def test_a_file_of_one_line_objects_gets_a_one_line_fact() -> None:
    text = '[\n  {"id": "a-1", "fact": "one"},\n  {"id": "a-2", "fact": "two"}\n]\n'
    out = apply_edits(parse_items(text.encode()), [AppendEntry({"id": "a-3", "fact": "three"})]).decode()
    assert (
        out
        == '[\n  {"id": "a-1", "fact": "one"},\n  {"id": "a-2", "fact": "two"},\n  {"id": "a-3", "fact": "three"}\n]\n'
    )
    block = '[\n  {\n    "id": "a-1"\n  }\n]\n'
    grown = apply_edits(parse_items(block.encode()), [AppendEntry({"id": "a-2"})]).decode()
    assert grown == '[\n  {\n    "id": "a-1"\n  },\n  {\n    "id": "a-2"\n  }\n]\n'


@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=30))
def test_one_line_files_stay_one_line_and_keep_every_fact(texts: list[str]) -> None:
    first = json.dumps({"id": "x-1", "fact": "start"}, ensure_ascii=False)
    doc = parse_items(f"[\n  {first}\n]\n".encode())
    made = new_facts("x", [{"id": "x-1", "fact": "start"}], [(t, {}, DAY) for t in texts], [])
    out = apply_edits(doc, [AppendEntry(r) for r in made]).decode()
    assert len(out.split("\n")) == len(texts) + 4  # and the empty piece after the last line break
    assert [r["fact"] for r in json.loads(out)] == ["start", *texts]
    assert len({r["id"] for r in json.loads(out)}) == len(texts) + 1


def test_a_change_spells_a_key_as_the_record_then_the_file_does() -> None:
    dated = [{"id": "a", "date": "2026-01-01"}, {"id": "b", "date": "2026-01-02"}]
    assert own_spelling("timestamp", dated[0], dated) == "date"
    assert own_spelling("timestamp", {"id": "c"}, dated) == "date"
    assert own_spelling("date", {"id": "d", "timestamp": "x"}, dated) == "timestamp"
    assert own_spelling("supersededBy", {"id": "e"}, [{"superseded_by": None}]) == "superseded_by"
    assert own_spelling("category", dated[0], dated) == "category"
    assert own_spelling("timestamp", {"id": "f"}, []) == "timestamp"
