"""Stable note names for facts, without ever writing an id into the agent's file.

A fact's note name is its id when it has a usable one. A fact without an id gets ``<slug>-<hash>`` from its text
the first time it is seen; afterwards the base remembers which note it is, so an edit to its text (on either side)
keeps its note. Names are unique per entity even on case-insensitive file systems.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence

from vaultsync.model import Record, canonical
from vaultsync.names import fold


def _text_hash(record: Record) -> str:
    text = record.get("fact")
    seed = text if isinstance(text, str) else canonical(record)
    return hashlib.sha1(seed.encode()).hexdigest()[:6]


def assign_notes(
    slug: str,
    facts: Sequence[tuple[int, Record]],
    base: Mapping[str, tuple[Record, int]],
) -> dict[str, tuple[int, Record]]:
    """Give each (position, record) its note name, reusing the base's names wherever the fact is the same one.

    Matching order for a fact: the base note whose record has the same id; for facts without an id, the base
    note with the same content, then the same text, then the same position and date. Whatever is left is new.
    """
    claimed: dict[str, str] = {}  # folded name -> name
    result: dict[str, tuple[int, Record]] = {}
    by_id: dict[str, str] = {}
    idless_base: list[tuple[str, Record, int]] = []
    for note, (record, index) in base.items():
        fact_id = record.get("id")
        if isinstance(fact_id, str):
            by_id.setdefault(fact_id, note)
        else:
            idless_base.append((note, record, index))

    def claim(note: str, item: tuple[int, Record]) -> None:
        claimed[fold(note)] = note
        result[note] = item

    pending: list[tuple[int, Record]] = []
    for index, record in facts:
        fact_id = record.get("id")
        note = by_id.get(fact_id) if isinstance(fact_id, str) else None
        if note and fold(note) not in claimed:
            claim(note, (index, record))
        else:
            pending.append((index, record))

    matchers = (
        lambda rec, idx, brec, bidx: canonical(rec) == canonical(brec),
        lambda rec, idx, brec, bidx: "fact" in rec and rec.get("fact") == brec.get("fact"),
        lambda rec, idx, brec, bidx: idx == bidx and _when(rec) == _when(brec),
    )
    for match in matchers if idless_base else ():  # nothing to match against in a first import
        still: list[tuple[int, Record]] = []
        for index, record in pending:
            if isinstance(record.get("id"), str):
                still.append((index, record))
                continue
            found = next(
                (n for n, brec, bidx in idless_base if fold(n) not in claimed and match(record, index, brec, bidx)),
                None,
            )
            if found:
                claim(found, (index, record))
            else:
                still.append((index, record))
        pending = still

    for index, record in pending:
        fact_id = record.get("id")
        stem = fact_id if isinstance(fact_id, str) else f"{slug}-{_text_hash(record)}"
        note, n = stem, 1
        while fold(note) in claimed:
            n += 1
            note = f"{stem}~{n}"
        claim(note, (index, record))
    return result


def _when(record: Record) -> object:
    return record.get("timestamp", record.get("date"))


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def next_fact_id(slug: str, ids: Sequence[str], taken: Iterable[str]) -> str:
    """The id an agent-side write gives one new fact (``next_fact_ids``)."""
    return next_fact_ids(slug, ids, taken, 1)[0]


def next_fact_ids(slug: str, ids: Sequence[str], taken: Iterable[str], count: int) -> list[str]:
    """The ids an agent-side write gives ``count`` new facts: the entity's own pattern, numbered past every id it
    ever had.

    The pattern is that of the newest numbered id in the file (``sarah-007`` -> ``sarah-``, three digits; ``f12``
    -> ``f``, two), leaving out the ``<slug>-mNNN`` ids a pass gives notes the person made unless nothing else
    is numbered; with no numbered id at all it is ``<slug>-001``. The numbers run on from one past the highest of
    that pattern among ``taken`` (every id the entity holds or ever held, and its notes' names), and no name that
    ``taken`` holds in any case is given. All ``count`` are minted from one look at ``taken``: an extraction
    handing in thousands of facts for one entity costs one pass over its ids, not one per fact.
    """
    taken = list(taken)
    numbered = [m for m in (_NUMBERED.match(i) for i in ids) if m]
    own = [m for m in numbered if not _is_person_minted(slug, m.group(0))] or numbered
    prefix, width = (own[-1].group(1), len(own[-1].group(2))) if own else (f"{slug}-", 3)
    highest = max(
        (int(m.group(2)) for m in (_NUMBERED.match(t) for t in taken) if m and m.group(1) == prefix), default=0
    )
    folded = {fold(t) for t in taken}
    minted: list[str] = []
    n = highest
    while len(minted) < count:
        n += 1
        name = f"{prefix}{n:0{width}d}"
        if fold(name) not in folded:
            minted.append(name)
    return minted


def _is_person_minted(slug: str, fact_id: str) -> bool:
    prefix = f"{slug}-m"
    return fact_id.startswith(prefix) and fact_id[len(prefix) :].isdigit()
