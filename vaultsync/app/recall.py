"""Recall: full-text search over the whole memory, current knowledge first.

The FTS5 index gives the candidates by bm25; ``vaultsync.core.rank`` re-orders them by the entities, speakers and
period the query names and by each daily-note line's neighbours, with what the index keeps beside the text.

Every face (the command line, the HTTP API, the MCP tools) calls ``recall``; a pass calls ``refresh_after_pass``.
The index (``vaultsync.state.recall``) is a cache of the memory tree: before each query it is brought up to date
(``vaultsync.write_path.recall_refresh``), and a missing, old or unreadable one is built again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from vaultsync.app import recall_dense
from vaultsync.app.facts import vault_folders
from vaultsync.app.hit_notes import existing_notes
from vaultsync.config import Config
from vaultsync.core import rank
from vaultsync.core.periods import Period, period
from vaultsync.errors import UsageError
from vaultsync.memory.identity import AmbiguousEntity, UnknownEntity, resolve_entity
from vaultsync.state.recall import Candidate, Doc, Filters, IndexBroken, RecallIndex
from vaultsync.state.recall_query import Term, name_words, terms, unspaced_names
from vaultsync.system.embedder import Endpoint
from vaultsync.write_path.recall_refresh import rebuild, refresh

KINDS = ("fact", "summary", "memory", "daily")
CANDIDATES = 50  # rows the index ranks by bm25 before recency and status reorder them; at least the limit
# A word in more than this share of the documents says little about any of them, and scoring all of its
# matches is most of a query's time: it is dropped while the query has rarer words.
COMMON_SHARE = 0.2
MIN_COMMON = 1000  # below this many rows a word is cheap to score whatever its share
RARE_ROWS = 4000  # the rarer words' matches scored when too few pieces hold every word (``plan_terms``)
ROWS = 8000  # a step matching more rows than this scores the newest this many (``RecallIndex.search``)
MAX_NAMED = 3  # a query word naming more entities or speakers than this ("project") names none in particular
NAMES_LOOKED_UP = 20  # entities a word may name and still be looked up, for the context's named entities
MAX_KEPT = 5  # the rarest words kept after pruning; further ones barely move the top of the list
# A named period also asks the index for its best rows inside the period: the words alone may not reach them.
PERIOD_CANDIDATES = 20


@dataclass(frozen=True)
class RecallOptions:
    limit: int = 10
    kinds: tuple[str, ...] = ()
    entity: str | None = None
    active_only: bool = False
    since: str | None = None
    until: str | None = None
    recency: bool = True
    today: str | None = None  # YYYY-MM-DD that "last week" counts from; None: the local date
    explain: bool = False  # each hit says its bm25 and the boosts it got
    person: str = ""  # the person's own name: a question naming them favours what they said


@dataclass
class Hit:
    kind: str
    root: str
    path: str
    lines: tuple[int, int] | None
    id: str | None
    entity: str | None
    status: str | None
    superseded_by: str | None
    vault_path: str | None
    text: str
    score: float
    explain: dict[str, float | str] | None = None

    def to_json(self) -> dict[str, Any]:
        shown = {"explain": self.explain} if self.explain is not None else {}
        return {
            "kind": self.kind,
            "root": self.root,
            "path": self.path,
            "lines": list(self.lines) if self.lines else None,
            "id": self.id,
            "entity": self.entity,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "vault_path": self.vault_path,
            "text": self.text,
            "score": self.score,
        } | shown


@dataclass
class RecallResult:
    query: str
    hits: list[Hit] = field(default_factory=list)
    # The entities a word of the query names in the index's names table (memory paths), whatever the hits: the
    # context a plugin asks for looks names up here rather than among the best hits. Not part of the JSON.
    named: tuple[str, ...] = ()
    semantic: str | None = None  # with the re-ranker configured and explain asked: what it did, or why not

    def to_json(self) -> dict[str, Any]:
        shown = {"semantic": self.semantic} if self.semantic is not None else {}
        return {"query": self.query, "hits": [hit.to_json() for hit in self.hits]} | shown


@dataclass(frozen=True)
class Plan:
    terms: list[Term]
    matches: int  # about how many rows the kept words match (rows holding two of them count twice)


def plan_terms(index: RecallIndex, query_terms: list[Term]) -> Plan:
    """The terms worth asking the index for: the rarest words, without those most documents hold.

    Scoring is per matching row, so a word found in a tenth of the memory (``user``, ``project``) costs more
    than the rest of the query together while hardly changing which rows come first. The pairs of characters
    an unspaced question is cut into are words here like any other (``recall_query.unspaced_terms``).
    """
    df = index.doc_freqs([t.word for t in query_terms])
    present = sorted((t for t in query_terms if df[t.word] > 0), key=lambda t: df[t.word])
    common = max(MIN_COMMON, int(index.doc_count() * COMMON_SHARE))
    kept = [t for t in present if df[t.word] <= common][:MAX_KEPT] or present[:1]
    # The rarest words first, as long as the rows they match stay within the budget: the pieces a commoner
    # word adds hold the query's rarest words least, and those holding all of them were found already.
    budget = kept[:1]
    for term in kept[1:]:
        if sum(df[t.word] for t in budget) + df[term.word] > RARE_ROWS:
            break
        budget.append(term)
    return Plan(budget, sum(df[t.word] for t in budget))


def _all_present(index: RecallIndex, query_terms: list[Term]) -> list[Term]:
    """Every term of the query when the index holds each of its words (else no piece can hold them all)."""
    words = [t.word for t in query_terms]
    df = index.doc_freqs(words)
    return query_terms if all(df[w] for w in words) else []


def recall(cfg: Config, query: str, options: RecallOptions | None = None) -> RecallResult:
    """The best pieces of memory for ``query``, typed as plain words (no query syntax is ever an error)."""
    options = _with_person(cfg, options or RecallOptions())
    index = refresh(cfg)
    try:
        folders = vault_folders(cfg)
        at = recall_dense.endpoint(cfg)
        try:
            return _located(cfg, search(index, query, options, folders, at))
        except IndexBroken:
            index = rebuild(cfg, index)
            return _located(cfg, search(index, query, options, folders, at))
    finally:
        index.close()


def _located(cfg: Config, result: RecallResult) -> RecallResult:
    """The result with every hit's ``vault_path`` a note that exists (``app/hit_notes.py``)."""
    paths = existing_notes(cfg, [hit.vault_path for hit in result.hits])
    result.hits = [
        hit if hit.vault_path == path else replace(hit, vault_path=path)
        for hit, path in zip(result.hits, paths, strict=True)
    ]
    return result


def _with_person(cfg: Config, options: RecallOptions) -> RecallOptions:
    return options if options.person else replace(options, person=cfg.git.person_name)


class Recaller:
    """``recall`` for a long-running face (the HTTP API): the index stays open, one per thread (an SQLite
    connection belongs to the thread that opened it), and is brought up to date with the memory tree at most
    once every ``every`` seconds instead of before each query, since that walk of the tree costs several times
    a query. A write the face itself made (``stale``) is seen by the next query; one the agent made on disk, within
    ``every`` seconds."""

    def __init__(self, cfg: Config, every: float = 1.0) -> None:
        self.cfg = cfg
        self.every = every
        self._local = threading.local()
        self._generation = 0

    def stale(self) -> None:
        """The memory changed through this face: every thread refreshes before its next query."""
        self._generation += 1

    def __call__(self, query: str, options: RecallOptions | None = None) -> RecallResult:
        local = self._local
        index: RecallIndex | None = getattr(local, "index", None)
        due = index is None or time.monotonic() - local.at >= self.every or local.generation != self._generation
        if due:
            if index is not None:
                index.close()
            local.generation = self._generation
            index = local.index = refresh(self.cfg)
            local.at = time.monotonic()
        assert index is not None
        folders = vault_folders(self.cfg)
        options = _with_person(self.cfg, options or RecallOptions())
        at = recall_dense.endpoint(self.cfg)
        try:
            return _located(self.cfg, search(index, query, options, folders, at))
        except IndexBroken:
            index = local.index = rebuild(self.cfg, index)
            return _located(self.cfg, search(index, query, options, folders, at))


def search(
    index: RecallIndex,
    query: str,
    options: RecallOptions,
    folders: Mapping[str, str] | None = None,
    at: Endpoint | None = None,
) -> RecallResult:
    """``recall`` on an index already current: what a long-running face calls between refreshes. ``folders``:
    the vault's PARA folder names -> memory's (``vault_folders``), so an entity may be named by its vault folder.
    ``at``: the embeddings endpoint of the semantic re-ranker (``recall_dense``), None when it is off."""
    result = RecallResult(query)
    limit = max(0, options.limit)
    query_terms = terms(query)
    # The options are checked first, so a mistake in one is said even when the words match nothing.
    filters = Filters(
        options.kinds,
        _entities(index, options.entity, folders or {}),
        options.active_only,
        _day(options.since, "since"),
        _day(options.until, "until"),
    )
    today = _day(options.today, "today") or date.today().isoformat()
    named_period = period(query, date.fromisoformat(today))
    if named_period is not None and named_period.relative:
        query_terms = terms(query[: named_period.start] + " " + query[named_period.end :]) or query_terms
    plan = plan_terms(index, query_terms)
    planned = plan.terms
    if not limit or not (planned or (at and query.strip())):
        return result
    want = max(CANDIDATES, limit)
    found = _candidates(index, query_terms, plan, filters, want) if planned else {}
    span = index.span(named_period.first, named_period.last) if named_period else None
    if span and named_period and filters == Filters():
        for c in index.search(planned, filters, PERIOD_CANDIDATES, rows=span):
            if named_period.holds(c.doc.ts):
                found.setdefault(c.doc, c)
    candidates = list(found.values())
    q, result.named = _question(index, query, query_terms, named_period, options.person)
    ranked = rank.rank(candidates, index.rows(rank.neighbour_ids(candidates)), q)
    if at is not None:
        ranked, note = recall_dense.rescore(index, at, query, ranked, filters, options.explain)
        result.semantic = note if options.explain else None
    ordered = rank.order(ranked, q, options.recency)
    result.hits = [_hit(r, planned, options.explain) for r in ordered[:limit]]
    return result


def _candidates(
    index: RecallIndex, query_terms: list[Term], plan: Plan, filters: Filters, want: int
) -> dict[Doc, Candidate]:
    """The rows bm25 puts first, the candidates re-ranking orders.

    First the pieces holding every word, common ones included: finding them is an intersection in the index,
    cheap even for words in half the memory, and they are what bm25 over all the words puts first. Only when
    they are too few are the rarest words asked for one by one (``plan_terms``).
    """
    found: dict[Doc, Candidate] = {}
    every = _all_present(index, query_terms)
    if len(every) > 1:
        fewest = min(index.doc_freqs([t.word])[t.word] for t in every)
        for c in index.search(every, filters, want, newest=ROWS if fewest > ROWS else 0, every=True):
            found[c.doc] = c
    if len(found) < want:
        newest = ROWS if plan.matches > ROWS else 0
        for c in index.search(plan.terms, filters, want, newest=newest):
            found.setdefault(c.doc, c)
    return found


def _question(
    index: RecallIndex, query: str, query_terms: list[Term], named_period: Period | None, person: str
) -> tuple[rank.Question, tuple[str, ...]]:
    """The entities and speakers the query names, and the person when it names them; with the entities any of
    its words names, up to ``NAMES_LOOKED_UP`` a word (``RecallResult.named``). A name in an unspaced script
    has no space around it in a question, so every short substring of such a run is looked up; of two names
    found one inside the other (李伟, 李伟明), the longer is meant."""
    words = [w for t in query_terms if not t.grams for w in name_words(t.word)]
    inside = index.known_names(unspaced_names(query))
    words += [w for w in inside if not any(w != other and w in other for other in inside)]
    wide = index.named(words, NAMES_LOOKED_UP)
    named = {word: targets for word, targets in wide.items() if len(targets) <= MAX_NAMED}
    entities = tuple(dict.fromkeys(t for targets in wide.values() for t in sorted(targets) if not t.startswith("@")))
    own = set(name_words(person))
    if own & set(words):
        for word in own & set(words):
            named.setdefault(word, set()).update({"@me", "@i", "@" + person.strip().lower()})
    return rank.question(query, named, named_period), entities


def parse_kinds(text: str | None) -> tuple[str, ...]:
    """The kinds a comma-separated option names (``fact,daily``), as the CLI and the HTTP API take them."""
    kinds = tuple(k.strip() for k in (text or "").split(",") if k.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise UsageError(f"{','.join(unknown)}: expected some of {','.join(KINDS)}", "kind")
    return kinds


def _day(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise UsageError(f"{value!r} is not a date; use YYYY-MM-DD", field) from None


def _entities(index: RecallIndex, wanted: str | None, vault_folders: Mapping[str, str]) -> tuple[str, ...]:
    """The entity ``wanted`` names, as every face names one (``memory/identity.py``): its memory path
    (``areas/people/sarah``), its end (``people/sarah``, ``sarah``) or its vault folder (``2 Areas/people/sarah``)."""
    if not wanted:
        return ()
    try:
        return (resolve_entity(wanted, index.entities(), vault_folders),)
    except (UnknownEntity, AmbiguousEntity) as exc:
        raise UsageError(str(exc), "entity") from None


SNIPPET = 240


def _snippet(text: str, planned: list[Term]) -> str:
    """The text around the first match, or all of it when short (most facts and bullets are)."""
    if len(text) <= SNIPPET:
        return text
    lower = text.lower()
    spots = [lower.find(t.word[: max(3, len(t.word) - 2)]) for t in planned]
    at = min((s for s in spots if s >= 0), default=0)
    start = max(0, at - SNIPPET // 3)
    end = min(len(text), start + SNIPPET)
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def _hit(ranked: rank.Ranked, planned: list[Term], explain: bool) -> Hit:
    doc = ranked.doc
    lines = (doc.first_line, doc.last_line) if doc.first_line and doc.last_line else None
    return Hit(
        kind=doc.kind,
        root=doc.root,
        path=doc.path,
        lines=lines if doc.kind != "fact" else None,
        id=doc.fact_id,
        entity=doc.entity,
        status=doc.status,
        superseded_by=doc.superseded_by,
        vault_path=doc.vault_path,
        text=_snippet(doc.body, planned),
        score=round(ranked.score, 4),
        explain=ranked.explain if explain else None,
    )
