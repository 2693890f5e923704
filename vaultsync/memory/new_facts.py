"""New facts in the shape of the file they join, for every write that adds facts to an agent's ``items.json``.

An agent's file has its own habits: ``date`` or ``timestamp``, ``supersededBy`` or ``superseded_by``, its keys in
its own order, ids numbered its own way. A fact added by a program (the HTTP API, an MCP tool, an extraction)
follows them, so the agent reading the file next finds nothing it would not have written itself. A date is
checked before it is written: ``yesterday`` in a date field would be kept as text, sorted wrongly by recall and
shown as a broken date in the vault.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from vaultsync.memory.identity import next_fact_ids
from vaultsync.model import Record

DATE_FIELDS = ("timestamp", "date")
DATE_FORM = "YYYY-MM-DD, or a date and time such as 2026-12-01T09:30:00"
# The contract's name of a key -> the other spelling some agents' files use instead.
SPELLINGS = {"timestamp": "date", "supersededBy": "superseded_by"}

Wanted = tuple[str, Mapping[str, Any], date]  # a new fact's text, its other fields, the day it was said


class BadField(ValueError):
    """A value that cannot be written into a fact; ``field`` names it, ``message`` says the accepted form."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def check_date(value: object, field: str) -> str:
    """``value`` when it is an ISO date or date and time (what the vault shows as a date property)."""
    if isinstance(value, str):
        text = value.strip()
        for parse in (date.fromisoformat, datetime.fromisoformat):
            try:
                parse(text)
            except ValueError:
                continue
            return text
    raise BadField(field, f"{value!r} is not a date; expected {DATE_FORM}")


def new_facts(slug: str, held: Sequence[Record], wanted: Sequence[Wanted], taken: Iterable[str]) -> list[Record]:
    """New records for ``wanted``, in the file's own shape, with ids minted in one batch past ``taken``.

    ``held``: the records the file holds now; ``taken``: every id the entity ever held and its notes' names.
    A field given under one spelling of a key (``timestamp``) is written under the other (``date``) when that
    is the only one the file uses; the keys come in the order of the file's newest record, others after them.
    """
    votes = Counter(k for r in held for k in r)
    ids = [r["id"] for r in held if isinstance(r.get("id"), str)]
    minted = next_fact_ids(slug, ids, [*ids, *taken], len(wanted))
    stamp = "date" if votes["date"] > votes["timestamp"] else "timestamp"
    order = {key: n for n, key in enumerate(held[-1] if held else ())}
    order.setdefault("id", -1)  # a file of id-less facts: the minted id leads, as it does in every other
    made = []
    for fact_id, (text, extra, day) in zip(minted, wanted, strict=True):
        given: dict[str, Any] = {}
        for key, value in extra.items():
            own = _own(key, votes)
            if own in given:
                raise BadField(key, f"given twice, as {own} and {key}; give it once")
            given[own] = value
        record: Record = {"id": fact_id, "fact": text}
        record["category"] = given.get("category")
        record[stamp] = given.get(stamp, day.isoformat())
        record["source"] = given.get("source")
        record["status"] = given.get("status", "active")
        record.update({k: v for k, v in given.items() if k not in record})
        kept = [(k, v) for k, v in record.items() if v is not None]
        made.append(dict(sorted(kept, key=lambda kv: order.get(kv[0], len(order)))))
    return made


def own_spelling(key: str, record: Record, held: Sequence[Record]) -> str:
    """``key`` as a change to ``record`` must spell it: as the record does when it holds either spelling, else
    as the file does (so a ``timestamp`` set on a fact whose file says ``date`` changes ``date``, never adds a
    second date)."""
    other = _other(key)
    if other is None or key in record:
        return key
    if other in record:
        return other
    return _own(key, Counter(k for r in held for k in r))


def _other(key: str) -> str | None:
    return SPELLINGS.get(key) or next((k for k, v in SPELLINGS.items() if v == key), None)


def _own(key: str, votes: Counter[str]) -> str:
    """``key`` as this file spells it: its other spelling when the file uses only that one."""
    other = _other(key)
    return other if other and not votes[key] and votes[other] else key
