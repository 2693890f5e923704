"""The weekly review's checks: pure functions from an entity's facts and summary to findings, each with the fix a
person can tick in the review note. No files: the checks are tested as a specification, with values.

Finding kinds are a contract (scripts read them from ``review --json``): dangling-superseded-by,
superseded-without-successor, superseded-by-cycle, successor-not-active, duplicate-active, conflicting-active,
stale-summary, missing-summary, bad-timestamp.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from vaultsync.model import Record

__all__ = ["EntityFacts", "Finding", "Fix", "review_entity"]

SPACES = re.compile(r"\s+")
QUOTE_MIN = 16  # shorter fact texts ("Lives in Paris") turn up in summaries by chance


@dataclass(frozen=True)
class Fix:
    """What ticking a finding's box does: ``supersede`` (``ids[0]`` replaced by ``by``) or ``regenerate``."""

    action: str
    ids: tuple[str, ...] = ()
    by: str = ""


@dataclass(frozen=True)
class Finding:
    kind: str
    entity: str  # the entity's folder under life/
    message: str
    ids: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "entity": self.entity, "message": self.message}
        if self.ids:
            out["ids"] = list(self.ids)
        out["fixes"] = [{"action": f.action, "ids": list(f.ids), "by": f.by or None} for f in self.fixes]
        return out


@dataclass(frozen=True)
class EntityFacts:
    """One entity as the review sees it: its facts in file order, its summary text and the day it was written
    (None: no summary.md)."""

    rel: str
    facts: Sequence[Record]
    summary: str | None
    summary_day: date | None = None
    known_ids: Collection[str] = field(default_factory=frozenset)  # every fact id in the graph


def review_entity(entity: EntityFacts, today: date, single_valued: Collection[str]) -> list[Finding]:
    """Every finding for one entity, in a stable order (by kind as listed above, then by fact)."""
    facts = [f for f in entity.facts if isinstance(f, dict)]
    by_id = {f["id"]: f for f in facts if isinstance(f.get("id"), str)}
    out = _chains(entity.rel, facts, by_id, entity.known_ids)
    out += _duplicates(entity.rel, facts)
    out += _conflicts(entity.rel, facts, single_valued)
    out += _summary(entity, facts, today)
    out += _timestamps(entity.rel, facts, today)
    return out


def successor(fact: Mapping[str, Any]) -> str | None:
    """The id a superseded fact names as its successor, under either key; free text is not an id."""
    value = fact.get("supersededBy", fact.get("superseded_by"))
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip().removeprefix("[[").removesuffix("]]").split("|")[0]
    return value


def _is_id(value: str) -> bool:
    return not SPACES.search(value)


def _chains(rel: str, facts: list[Record], by_id: dict[str, Record], known: Collection[str]) -> list[Finding]:
    out: list[Finding] = []
    for fact in facts:
        if fact.get("status") != "superseded":
            continue
        fid = str(fact.get("id", ""))
        nxt = successor(fact)
        if nxt is None:
            message = f"{fid or 'a fact'} is superseded but names no fact that replaced it"
            out.append(Finding("superseded-without-successor", rel, message, (fid,) if fid else ()))
            continue
        if not _is_id(nxt):
            continue  # free text as written in the wild: shown as text, not checked
        if nxt not in by_id:
            if nxt not in known:
                message = f"{fid} is superseded by {nxt}, which is no fact"
                out.append(Finding("dangling-superseded-by", rel, message, (fid, nxt)))
            continue
        out += _chain(rel, fid, nxt, by_id)
    return out


def _chain(rel: str, fid: str, nxt: str, by_id: dict[str, Record]) -> list[Finding]:
    """Follow a superseded fact's successors to an active fact; a loop or a dead end is a finding."""
    seen = [fid]
    current = nxt
    while current not in seen:
        seen.append(current)
        fact = by_id.get(current)
        status = fact.get("status") if fact else None
        if status == "active":
            return []
        after = successor(fact) if fact and status == "superseded" else None
        if after is None or not _is_id(after):
            message = f"{fid} is superseded by {nxt}, and {' -> '.join(seen)} reaches no active fact"
            return [Finding("successor-not-active", rel, message, tuple(seen))]
        current = after
    loop = seen[seen.index(current) :]
    if fid != min(loop):
        return []  # one finding per loop, from its smallest id
    return [Finding("superseded-by-cycle", rel, f"{' -> '.join([*loop, current])} goes round", tuple(loop))]


def _norm(text: Any) -> str:
    return SPACES.sub(" ", text).strip().casefold() if isinstance(text, str) else ""


def _active(facts: list[Record]) -> list[Record]:
    return [f for f in facts if f.get("status", "active") == "active" and isinstance(f.get("id"), str)]


def _duplicates(rel: str, facts: list[Record]) -> list[Finding]:
    groups: dict[str, list[Record]] = {}
    for fact in _active(facts):
        if _norm(fact.get("fact")):
            groups.setdefault(_norm(fact.get("fact")), []).append(fact)
    out = []
    for same in groups.values():
        if len(same) > 1:
            keep, ids = same[0]["id"], tuple(f["id"] for f in same)
            fixes = tuple(Fix("supersede", (f["id"],), keep) for f in same[1:])
            out.append(
                Finding("duplicate-active", rel, f"{', '.join(ids)} say the same; {keep} would stay", ids, fixes)
            )
    return out


def _conflicts(rel: str, facts: list[Record], single_valued: Collection[str]) -> list[Finding]:
    groups: dict[str, list[Record]] = {}
    for fact in _active(facts):
        if fact.get("category") in single_valued:
            groups.setdefault(str(fact["category"]), []).append(fact)
    out = []
    for category, active in groups.items():
        if len(active) > 1:
            newest = max(active, key=lambda f: str(f.get("timestamp", "")))
            ids = tuple(f["id"] for f in active)
            fixes = tuple(Fix("supersede", (f["id"],), newest["id"]) for f in active if f is not newest)
            message = f"{len(active)} active facts in {category!r}, which holds one: {', '.join(ids)}"
            out.append(Finding("conflicting-active", rel, message, ids, fixes))
    return out


def _summary(entity: EntityFacts, facts: list[Record], today: date) -> list[Finding]:
    regenerate = (Fix("regenerate"),)
    if entity.summary is None:
        if facts:
            return [Finding("missing-summary", entity.rel, "has facts but no summary.md", (), regenerate)]
        return []
    days = [_day(f.get("timestamp")) or date.min for f in _active(facts)]
    newest = max((d for d in days if d <= today), default=date.min)  # a future date is a bad-timestamp, not this
    text = _norm(entity.summary)
    quoted = [
        str(f.get("id", ""))
        for f in facts
        if f.get("status") == "superseded" and len(_norm(f.get("fact"))) >= QUOTE_MIN and _norm(f.get("fact")) in text
    ]
    if quoted:
        message = f"summary.md quotes superseded fact(s) {', '.join(quoted)}"
        return [Finding("stale-summary", entity.rel, message, tuple(quoted), regenerate)]
    if entity.summary_day is not None and newest > entity.summary_day:
        message = f"summary.md ({entity.summary_day}) is older than the newest active fact ({newest})"
        return [Finding("stale-summary", entity.rel, message, (), regenerate)]
    return []


def _day(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _timestamps(rel: str, facts: list[Record], today: date) -> list[Finding]:
    out = []
    for fact in facts:
        value = fact.get("timestamp")
        if value is None:
            continue
        day = _day(value)
        fid = str(fact.get("id", ""))
        if day is None:
            out.append(Finding("bad-timestamp", rel, f"{fid}: timestamp {value!r} is not a date", (fid,)))
        elif day > today:
            out.append(Finding("bad-timestamp", rel, f"{fid}: timestamp {value} is in the future", (fid,)))
    return out
