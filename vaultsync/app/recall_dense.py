"""Recall's optional semantic re-ranker: an embeddings endpoint the person runs (``[recall.embeddings]``).

Two halves that never wait for each other. ``embed`` (``vaultsync recall --embed``, and ``serve``'s background
thread) sends the index's texts that have no vector yet to the endpoint in batches and stores the answers
(``vaultsync.state.recall_vectors``); a pass never calls it. ``rescore``, at query time, embeds the question
(one short request) and re-scores the lexical candidates with ``(1 - WEIGHT) x their score / the best score +
WEIGHT x cosine``; when the words found fewer than ``FEW`` candidates (a paraphrase, a question in the other
language) the ``DENSE`` nearest texts are added. With the endpoint down or vectors missing, recall stays lexical
and says so (``note``).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, replace

from vaultsync.config import Config
from vaultsync.core import rank
from vaultsync.state import recall_vectors as vectors
from vaultsync.state.recall import Doc, Filters, RecallIndex
from vaultsync.system.embedder import EmbedderDown, Endpoint
from vaultsync.system.embedder import embed as ask
from vaultsync.write_path.recall_refresh import refresh

# The cosine's share of a hit's score, chosen on the English and Chinese evaluation sets (docs/recall.md): the
# largest of 0.2 to 0.7 that leaves the English set's R@5 and MRR no lower than the lexical ranking's.
WEIGHT = 0.2
FEW = 10  # lexical candidates below this many: the nearest texts are added
DENSE = 10  # how many nearest texts are added then
BATCH = 32  # texts per request while embedding
QUERY_TIMEOUT = 2.0  # seconds a query waits for its question's vector before answering lexically
BATCH_TIMEOUT = 120.0
RETRY = 30.0  # seconds a long-running face answers lexically after the endpoint failed, before asking again
_down: dict[str, tuple[float, str]] = {}  # url -> (when it failed, why)


def endpoint(cfg: Config) -> Endpoint | None:
    """The configured endpoint, or None when the re-ranker is off (the default)."""
    e = cfg.embeddings
    return Endpoint(e.url, e.model, cfg.embeddings_key) if e.url else None


@dataclass(frozen=True)
class EmbedReport:
    embedded: int  # texts embedded by this run
    have: int  # texts with a vector now
    texts: int  # distinct texts in the index
    pruned: int  # vectors of texts no longer in the index, dropped
    seconds: float
    error: str | None = None  # why the run stopped early (the endpoint's failure)

    def to_json(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in ("embedded", "have", "texts", "pruned", "seconds", "error")}


def embed_recall(cfg: Config, batch: int = BATCH) -> EmbedReport | None:
    """``vaultsync recall --embed``: bring the index up to date with the memory, then embed what has no vector.
    None when the re-ranker is off. Run after a pass, never inside one: a pass does not wait for the endpoint."""
    at = endpoint(cfg)
    if at is None:
        return None
    index = refresh(cfg)
    try:
        return embed(index, at, batch)
    finally:
        index.close()


def semantic_state(cfg: Config) -> str | None:
    """``status``'s line about the re-ranker (``state``); None when it is off."""
    at = endpoint(cfg)
    if at is None:
        return None
    index = refresh(cfg)
    try:
        return state(index, at)
    finally:
        index.close()


def embed(index: RecallIndex, at: Endpoint, batch: int = BATCH) -> EmbedReport:
    """Embed every text of ``index`` that has no vector of ``at.model``, ``batch`` at a time, each batch stored as
    it comes (an interrupted run keeps what it did); the outcome is remembered for ``status``."""
    started = time.monotonic()
    pruned = vectors.prune(index, at.model)
    todo = vectors.missing(index, at.model)
    total = vectors.coverage(index, at.model).texts
    done = 0
    error = None
    for start in range(0, len(todo), max(1, batch)):
        part = todo[start : start + batch]
        try:
            found = ask(at, [text for _, text in part], BATCH_TIMEOUT)
        except EmbedderDown as exc:
            error = str(exc)
            break
        vectors.store(index, ((k, vectors.quantise(v)) for (k, _), v in zip(part, found, strict=True)))
        done += len(part)
    have = total - len(todo) + done
    index.remember("embed", f"{time.strftime('%Y-%m-%d %H:%M')} {error or 'ok'}")
    return EmbedReport(done, have, total, pruned, round(time.monotonic() - started, 3), error)


def state(index: RecallIndex, at: Endpoint) -> str:
    """One line for ``status``: how many texts have vectors, and how the last embedding run ended."""
    seen = vectors.coverage(index, at.model)
    last = index.note("embed") or "never run (vaultsync recall --embed)"
    return f"semantic re-ranker: {seen.embedded} of {seen.texts} texts embedded by {at.model}; last run {last}"


def rescore(
    index: RecallIndex, at: Endpoint, query: str, ranked: list[rank.Ranked], filters: Filters, explain: bool
) -> tuple[list[rank.Ranked], str]:
    """``ranked`` re-scored by the blend, with the nearest texts added when the words found few; and a line
    saying what the semantic part did (``on``, or why recall stayed lexical)."""
    try:
        question = _question_vector(at, query)
    except EmbedderDown as exc:
        return ranked, f"lexical only: {exc}"
    keys = {id(r): vectors.key(at.model, r.doc.body) for r in ranked}
    stored = vectors.load(index, keys.values())
    pool = list(ranked)
    if len(ranked) < FEW:
        seen = {r.doc for r in ranked}
        near = _nearest(index, at, question, filters)
        pool += [rank.Ranked(doc, 0.0, {"bm25": 0.0}) for doc in near if doc not in seen]
        keys = {id(r): vectors.key(at.model, r.doc.body) for r in pool}
        stored |= vectors.load(index, [k for k in keys.values() if k not in stored])
    if not stored:
        return ranked, "lexical only: no text has a vector yet (vaultsync recall --embed)"
    best = max((r.score for r in pool), default=0.0) or 1.0
    cosines = {k: vectors.cosine(question, v) for k, v in stored.items()}
    middle = sorted(cosines.values())[len(cosines) // 2]
    # A model's cosines crowd into a narrow band (0.7 to 0.9 for e5): spread over the candidates' own range, as
    # the lexical scores are by the best one, so that both halves of the blend weigh what their share says.
    low, high = min(cosines.values()), max(cosines.values())
    spread = (high - low) or 1.0
    out = []
    for r in pool:
        cos = cosines.get(keys[id(r)])
        near = ((middle if cos is None else cos) - low) / spread
        score = (1 - WEIGHT) * r.score / best + WEIGHT * near
        parts = dict(r.explain) if explain else {}
        if explain:
            parts["cosine"] = round(cos, 4) if cos is not None else "no vector yet"
        out.append(replace(r, score=max(score, 1e-9), explain=parts))
    lacking = sum(1 for r in pool if keys[id(r)] not in stored)
    return out, "on" + (f" ({lacking} of {len(pool)} candidates have no vector yet)" if lacking else "")


def _question_vector(at: Endpoint, query: str) -> vectors.Vector:
    failed = _down.get(at.url)
    if failed and time.monotonic() - failed[0] < RETRY:
        raise EmbedderDown(failed[1])
    try:
        found = ask(at, [query], QUERY_TIMEOUT)
    except EmbedderDown as exc:
        _down[at.url] = (time.monotonic(), str(exc))
        raise
    _down.pop(at.url, None)
    return vectors.quantise(found[0])


def _nearest(index: RecallIndex, at: Endpoint, question: vectors.Vector, filters: Filters) -> list[Doc]:
    """The docs of the ``DENSE`` texts nearest the question that pass ``filters``: a scan of every vector."""
    by_key = {vectors.key(at.model, text): text for text in vectors.texts(index)}
    scored = ((vectors.cosine(question, v), k) for k, v in vectors.load(index).items() if k in by_key)
    found: list[Doc] = []
    for _, k in heapq.nlargest(DENSE * 3, scored):
        found += [doc for _, doc in vectors.docs_of(index, [by_key[k]]) if _passes(doc, filters)]
        if len(found) >= DENSE:
            break
    return found[:DENSE]


def _passes(doc: Doc, filters: Filters) -> bool:
    """What ``RecallIndex.search``'s filters would let through, for a doc found by its vector."""
    if filters.kinds and doc.kind not in filters.kinds:
        return False
    entity = doc.entity or ""
    if filters.entities and not any(entity == e or entity.startswith(e + "/") for e in filters.entities):
        return False
    if filters.active_only and (doc.status or "active").lower() != "active":
        return False
    if filters.since and (doc.ts or "") < filters.since:
        return False
    return not (filters.until and (not doc.ts or doc.ts > filters.until + "~"))
