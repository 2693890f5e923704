"""Re-ranking recall's candidates with what the memory knows besides their words: who, when and what came before.

bm25 scores a row by its own words. Three things it cannot see decide many questions put to a memory: a
person's or project's name is in most of their own rows, so it weighs nearly nothing (``ENTITY``); a date or
period in the question is metadata, not text (``PERIOD``, ``WHEN``); and in a daily-note log the answer is often
the line after the one that raised the topic (``PREV``, ``NEXT``). The score of a piece is

    (bm25 + PREV * bm25(line before) + NEXT * bm25(line after)) * (1 + entity + period + when)

where ``PREV_SAID`` stands for ``PREV`` when the line before asks nothing, and a line no query word reached
still counts when its neighbour did. The constants are few and the same for every memory; they were chosen on
``benchmarks/recall_eval.py``'s set, and ``docs/recall.md`` lists them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from vaultsync.core.periods import Period
from vaultsync.state.recall import Candidate, Doc
from vaultsync.state.recall_query import UNSPACED_RUN

# The piece belongs to an entity the question names, is spoken by a named speaker, or names one in its text.
# A piece that only names the entity gets as much as its own: a boost for the owner's facts alone put another
# entity's fact about them behind the owner's unrelated ones (0.009 of recall@5 on the generated 50k memory).
ENTITY = 0.7
ADDRESSED = 0.2  # a speaker's line that only names them: "Hey Caroline!" is about its speaker, not Caroline
PERIOD = 1.0  # the piece is dated inside the period the question names
WHEN = 0.1  # a "when" question: the piece carries a date
PREV = 0.9  # share of the line before's bm25 a line gets when that line asks something: the answer follows
PREV_SAID = 0.1  # the same when the line before states something: what follows is more often a reaction
NEXT = 0.1  # share of the line after's
REACH = 10  # the best daily-note candidates whose neighbours are read
SUPERSEDED = 2  # ``standing`` of a superseded fact
RECENCY_TIE = 0.01  # scores within this share of each other are equal: the newer piece first
WHEN_WORDS = re.compile(
    r"\b(when|what (?:date|year|month)|how long ago)\b|什么时候|哪天|哪一天|几号|几月|何时|いつ", re.I
)
# A question after what used to be true: superseded facts then rank by relevance like the rest.
PAST_WORDS = re.compile(r"\b(before|previous(?:ly)?|used to|former(?:ly)?|earlier|originally|superseded)\b", re.I)


@dataclass(frozen=True)
class Question:
    """What re-ranking needs of a question: the entities and speakers it names, its period, its kind."""

    entities: frozenset[str] = frozenset()  # memory paths (areas/people/sarah)
    speakers: frozenset[str] = frozenset()  # speaker labels, lower case
    words: frozenset[str] = frozenset()  # the name words the question used, to see a line mention them
    period: Period | None = None
    when: bool = False
    past: bool = False


def question(text: str, named: Mapping[str, set[str]], named_period: Period | None) -> Question:
    """``named``: what each query word names (``RecallIndex.named``), entity paths and ``@label``s."""
    entities = {t for targets in named.values() for t in targets if not t.startswith("@")}
    speakers = {t[1:] for targets in named.values() for t in targets if t.startswith("@")}
    return Question(
        frozenset(entities),
        frozenset(speakers),
        frozenset(named),
        named_period,
        bool(WHEN_WORDS.search(text)),
        bool(PAST_WORDS.search(text)),
    )


@dataclass
class Ranked:
    """A piece to return, its score and the parts of it (``explain``)."""

    doc: Doc
    score: float
    explain: dict[str, float | str] = field(default_factory=dict)


def _same_block(a: Doc, b: Doc) -> bool:
    return a.kind == "daily" and a.source == b.source and a.names == b.names


def neighbour_ids(candidates: Sequence[Candidate]) -> set[int]:
    """The rows next to the ``REACH`` best daily-note candidates: the lines before and after each may be in its
    block. A weaker candidate's neighbour would rank below the hits returned anyway."""
    daily = sorted((c for c in candidates if c.doc.kind == "daily"), key=lambda c: -c.relevance)
    return {c.id + step for c in daily[:REACH] for step in (-1, 1)}


def _owns(doc: Doc, q: Question) -> bool:
    if doc.speaker and doc.speaker in q.speakers:
        return True
    return bool(doc.entity) and any(doc.entity == e or doc.entity.startswith(e + "/") for e in q.entities)


def _mentions(doc: Doc, q: Question) -> bool:
    if not q.words:
        return False
    body = doc.body.lower()
    words = set(re.findall(r"[^\W_]+", body))
    # A name in an unspaced script is part of a longer run of the text ("王芳喜欢..."): found as a substring.
    return not words.isdisjoint(q.words) or any(w in body for w in q.words if UNSPACED_RUN.fullmatch(w))


def boosts(doc: Doc, q: Question) -> dict[str, float]:
    """Each boost that applies to ``doc`` for ``q``, by name."""
    found: dict[str, float] = {}
    if _owns(doc, q):
        found["entity"] = ENTITY
    elif _mentions(doc, q):
        found["entity"] = ADDRESSED if doc.speaker else ENTITY
    if q.period and q.period.holds(doc.ts):
        found["period"] = PERIOD
    if q.when and doc.ts:
        found["when"] = WHEN
    return found


def rank(candidates: Sequence[Candidate], rows: Mapping[int, Doc], q: Question) -> list[Ranked]:
    """Every candidate and every line a candidate's neighbour reaches, scored and explained, unsorted."""
    relevance = {c.id: c.relevance for c in candidates}
    docs: dict[int, Doc] = {c.id: c.doc for c in candidates}
    for c in candidates:
        if c.doc.kind != "daily":
            continue
        for step in (-1, 1):
            other = rows.get(c.id + step)
            if other is not None and c.id + step not in docs and _same_block(c.doc, other):
                docs[c.id + step] = other
    out: list[Ranked] = []
    for row, doc in docs.items():
        own = relevance.get(row, 0.0)
        before, after = docs.get(row - 1), docs.get(row + 1)
        context = 0.0
        if before is not None and _same_block(doc, before):
            context += (PREV if "?" in before.body else PREV_SAID) * relevance.get(row - 1, 0.0)
        if after is not None and _same_block(doc, after):
            context += NEXT * relevance.get(row + 1, 0.0)
        parts = boosts(doc, q)
        explain: dict[str, float | str] = {"bm25": round(own, 4)}
        if round(context, 4):
            explain["context"] = round(context, 4)
        explain.update(parts)
        out.append(Ranked(doc, (own + context) * (1 + sum(parts.values())), explain))
    return out


def order(ranked: list[Ranked], q: Question, recency: bool = True) -> list[Ranked]:
    """Current knowledge first (``standing``; a superseded fact as current when the question asks what was true
    before), then by score; with ``recency``, of two pieces within ``RECENCY_TIE`` of each other the newer first."""

    def key(r: Ranked) -> tuple[int, float, int]:
        rank_of = standing(r.doc.status)
        if rank_of == SUPERSEDED and q.past:
            rank_of = 0
        if not recency:
            return (rank_of, -r.score, 0)
        band = math.floor(math.log(max(r.score, 1e-9)) / math.log1p(RECENCY_TIE))
        return (rank_of, -band, -_day_number(r.doc.ts))

    return sorted(ranked, key=key)


def standing(status: str | None) -> int:
    """0 for what is known now (an active fact, a fact without a status, every piece that is not a fact); 1 for a
    fact nobody has vouched for yet (``proposed`` by extraction, or any status of the agent's own); 2
    (``SUPERSEDED``) for a superseded one. A fresh proposal is newer than what was reviewed, so recency alone
    would put it first."""
    word = (status or "active").strip().lower()
    return 0 if word == "active" else SUPERSEDED if word == "superseded" else 1


def _day_number(ts: str | None) -> int:
    try:
        return date.fromisoformat(ts[:10]).toordinal() if ts else 0
    except ValueError:
        return 0
