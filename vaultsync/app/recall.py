"""Recall: full-text search over the whole memory, current knowledge first.

Every face (the command line now, HTTP and MCP later) calls ``recall``; a pass calls ``refresh_after_pass``.
The index (``vaultsync.state.recall``) is a cache of the memory tree: before each query it is brought up to date
by re-reading only the files whose stat changed, and a missing, old or unreadable one is built again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from vaultsync.app.recall_docs import entity_of_source, read_docs, tree_files
from vaultsync.config import Config
from vaultsync.state.files import StateFiles
from vaultsync.state.recall import Candidate, Filters, IndexBroken, RecallIndex, open_index
from vaultsync.state.recall_query import Term, terms

KINDS = ("fact", "summary", "memory", "daily")
CANDIDATES = 50  # rows the index ranks by bm25 before recency and status reorder them; at least the limit
# A word in more than this share of the documents says little about any of them, and scoring all of its
# matches is most of a query's time: it is dropped while the query has rarer words.
COMMON_SHARE = 0.2
MIN_COMMON = 1000  # below this many rows a word is cheap to score whatever its share
NEWEST = 20000  # a query matching more rows than this scores the newest this many (``RecallIndex.search``)
MAX_KEPT = 5  # the rarest words kept after pruning; further ones barely move the top of the list
RECENCY_WEIGHT = 0.3  # how much more a piece from the newest day scores than a very old one (+30%)
RECENCY_HALF_LIFE_DAYS = 90.0


class UsageError(ValueError):
    """An option recall cannot use (a date that is not one, an entity the memory does not hold)."""


@dataclass(frozen=True)
class RecallOptions:
    limit: int = 10
    kinds: tuple[str, ...] = ()
    entity: str | None = None
    active_only: bool = False
    since: str | None = None
    until: str | None = None
    recency: bool = True


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

    def to_json(self) -> dict[str, Any]:
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
        }


@dataclass
class RecallResult:
    query: str
    hits: list[Hit] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "hits": [hit.to_json() for hit in self.hits]}


def refresh(cfg: Config) -> RecallIndex:
    """The index, current with the memory tree; built from scratch when missing, of another version or broken."""
    path = StateFiles(cfg.state_dir).recall
    index, _ = open_index(path)
    try:
        _update(cfg, index)
    except IndexBroken:
        index.close()
        path.unlink(missing_ok=True)
        index, _ = open_index(path)
        _update(cfg, index)
    return index


def refresh_after_pass(cfg: Config) -> None:
    """Keep an existing index current after a pass that changed something.

    An index nobody has asked for yet is not built here: a first import would pay for a full read of the
    memory on top of its own; the first query builds it instead. A broken one is dropped for that query too.
    """
    path = StateFiles(cfg.state_dir).recall
    if not path.exists():
        return
    try:
        index, _ = open_index(path)
        try:
            _update(cfg, index)
        finally:
            index.close()
    except IndexBroken:
        path.unlink(missing_ok=True)


def _update(cfg: Config, index: RecallIndex) -> None:
    found = tree_files(cfg)
    known = index.file_stats()
    changed = {p for p, st in found.stats.items() if known.get(p) != st} | (known.keys() - found.stats.keys())
    if not changed:
        return
    rels: set[str] = set()
    files: set[str] = set()
    for source in changed:
        rel = found.entity_of.get(source) or entity_of_source(source)
        if rel is not None:
            rels.add(rel)
        else:
            files.add(source)
    # An entity's facts carry its name from summary.md: both of its files are indexed together.
    sources = files | {f"life/{rel}/{name}" for rel in rels for name in ("items.json", "summary.md")}
    docs = read_docs(cfg, rels, [f for f in files if f in found.stats])
    index.replace(sources, docs, {s: found.stats.get(s) for s in sources})


@dataclass(frozen=True)
class Plan:
    terms: list[Term]
    matches: int  # about how many rows the kept words match (rows holding two of them count twice)


def plan_terms(index: RecallIndex, query_terms: list[Term]) -> Plan:
    """The terms worth asking the index for: the rarest words, without those most documents hold.

    Scoring is per matching row, so a word found in a tenth of the memory (``user``, ``project``) costs more
    than the rest of the query together while hardly changing which rows come first.
    """
    words = [t for t in query_terms if not t.grams]
    unspaced = [t for t in query_terms if t.grams]
    df = index.doc_freqs([t.word for t in words])
    present = sorted((t for t in words if df[t.word] > 0), key=lambda t: df[t.word])
    common = max(MIN_COMMON, int(index.doc_count() * COMMON_SHARE))
    kept = [t for t in present if df[t.word] <= common][:MAX_KEPT] or present[:1]
    return Plan(kept + unspaced, sum(df[t.word] for t in kept))


def recall(cfg: Config, query: str, options: RecallOptions | None = None) -> RecallResult:
    """The best pieces of memory for ``query``, typed as plain words (no query syntax is ever an error)."""
    options = options or RecallOptions()
    index = refresh(cfg)
    try:
        return search(index, query, options)
    finally:
        index.close()


def search(index: RecallIndex, query: str, options: RecallOptions) -> RecallResult:
    """``recall`` on an index already current: what a long-running face calls between refreshes."""
    result = RecallResult(query)
    limit = max(0, options.limit)
    plan = plan_terms(index, terms(query))
    planned = plan.terms
    if not planned or not limit:
        return result
    filters = Filters(
        options.kinds, _entities(index, options.entity), options.active_only, _day(options.since), _day(options.until)
    )
    newest = NEWEST if plan.matches > NEWEST else 0
    candidates = index.search(planned, filters, max(CANDIDATES, limit), newest=newest)
    today = index.newest_date() if options.recency else None
    ranked = sorted(candidates, key=lambda c: _order(c, today))
    result.hits = [_hit(c, _score(c, today), planned) for c in ranked[:limit]]
    return result


def _day(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise UsageError(f"{value!r} is not a date; use YYYY-MM-DD") from None


def _entities(index: RecallIndex, wanted: str | None) -> tuple[str, ...]:
    """The entities ``wanted`` names: a memory path (``areas/people/sarah``), its tail (``people/sarah``), a slug
    (``sarah``) or a vault folder (``2 Areas/people/sarah``); the path's last part is enough when unique."""
    if not wanted:
        return ()
    tail = wanted.strip().strip("/").split("/")
    known = index.entities()
    for size in range(len(tail), 0, -1):
        found = tuple(e for e in known if e.split("/")[-size:] == tail[-size:])
        if found:
            return found
    raise UsageError(f"no entity {wanted!r} in the memory")


def _score(candidate: Candidate, newest: str | None) -> float:
    """bm25, raised by up to ``RECENCY_WEIGHT`` for a dated piece as it nears the newest date in the memory."""
    ts = candidate.doc.ts
    if not newest or not ts:
        return candidate.relevance
    try:
        age = (date.fromisoformat(newest[:10]) - date.fromisoformat(ts[:10])).days
    except ValueError:
        return candidate.relevance
    return candidate.relevance * (1 + RECENCY_WEIGHT * math.pow(0.5, max(0, age) / RECENCY_HALF_LIFE_DAYS))


def _order(candidate: Candidate, newest: str | None) -> tuple[bool, float]:
    """Current knowledge first: a superseded fact comes after every hit that is not, then by score."""
    return (candidate.doc.status == "superseded", -_score(candidate, newest))


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


def _hit(candidate: Candidate, score: float, planned: list[Term]) -> Hit:
    doc = candidate.doc
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
        score=round(score, 4),
    )
