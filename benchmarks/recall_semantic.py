"""Does a semantic component that needs no download, key or GPU improve recall? Two kinds are tried against today's
ranking (``vaultsync``, ``search`` as it is) and plain bm25, in the same run, on the same index. Both are pure
Python over the index (numpy is no dependency) and ask a second bm25 query of ``EXPAND`` words, bounded as the
first one is, whose score is added to each row's bm25 (``bm25 + beta * bm25 of the expansion``, beta in
``BETAS``) before the re-ranking (entity, period, neighbours) runs as usual:

- ``prf beta``: pseudo-relevance feedback (RM3-like). The expansion is the words that distinguish the query's
  ``FEEDBACK`` best pieces: each word's share of each piece, times its idf from the index's own vocabulary.
- ``cooc beta``: word associations learned from the memory itself: positive pointwise mutual information of the
  words within ``WINDOW`` lines of each other in a daily-note block (or in one fact or section). The expansion is
  the query's words' strongest associates. Unlike feedback it can reach words none of the first hits holds, such
  as the answer two turns after the question that named the topic. ``cooc beta balanced`` gives each query word
  an equal share of the expansion, so that a question about two topics is not pulled towards one.
- ``... reach``: the expansion only re-scores the candidates and the lines next to them; it brings in no row.
- ``... local``: no second query either: the expansion words each candidate (or line next to one) holds add their
  idf, counted in Python, which costs a fraction of a second bm25 query.

FTS5's ``trigram`` tokenizer (typos, substrings) was left out: no question of either set has a typo, porter
stemming already matches the word forms they use, and it would add a second full-text table to the index.

What it found, and why none of it is in ``vaultsync``: docs/recall.md, "The evaluation set".

Usage: ``.venv/bin/python benchmarks/recall_semantic.py [--only PATTERN]`` prints, per variant, recall@5 and
recall@10 per question kind of ``benchmarks/recall_eval.py``'s set and what the variant adds to a query's time,
paired query by query against today's ranking (about ten seconds). ``--dir DIR`` (the trees
``benchmarks/recall.py --dir DIR`` left) adds recall@5/@10 on ``--quality`` questions drawn from that generated
memory, the time and memory ``cooc``'s learning takes there, and the in-process percentiles on its queries
(about five minutes at 50k facts with every variant).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import WORD, _found, eval_index, pct, plain_bm25, queries

from vaultsync import config as configmod
from vaultsync.app.recall import (
    CANDIDATES,
    PERIOD_CANDIDATES,
    ROWS,
    RecallOptions,
    _candidates,
    _question,
    plan_terms,
    refresh,
    search,
)
from vaultsync.core import rank
from vaultsync.core.periods import period
from vaultsync.state.recall import Candidate, Doc, Filters, RecallIndex
from vaultsync.state.recall_query import STOPWORDS, UNSPACED_RUN, Term, terms

FEEDBACK = 5  # best pieces whose words feed ``prf``
EXPAND = 5  # expansion words asked for
BETAS = (0.1, 0.3, 0.5)  # weights of the expansion's bm25 tried
WINDOW = 2  # ``cooc``: lines either side of a daily-note line that count as its context
MIN_PAIR = 2  # ``cooc``: a pair seen fewer times is noise
COMMON = 0.2  # a word in more than this share of the pieces is neither expanded from nor into
TOKEN = re.compile(r"[^\W\d_]{3,}")
Where = tuple[str, tuple[int, int] | None, str | None]  # path, lines, fact id: what evidence is matched against
Wanted = tuple[str, None, str | None] | tuple[str, int]  # a fact (path, -, id) or a daily line (path, first line)


@dataclass
class Associations:
    """``cooc``'s model: for each word, its associates by PPMI, strongest first."""

    near: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    seconds: float = 0.0
    pairs: int = 0
    peak_mb: float = 0.0  # how far learning raised the process's peak RSS


def words_of(text: str) -> set[str]:
    """The words of ``text`` worth associating: no stop words, digits or unspaced scripts (their pairs of
    characters are no words)."""
    return {w for w in TOKEN.findall(UNSPACED_RUN.sub(" ", text.lower())) if w not in STOPWORDS}


def learn(index: RecallIndex, keep: int = 20) -> Associations:
    """PPMI over co-occurrence windows: a daily-note line with the ``WINDOW`` lines either side of it in its block,
    any other piece alone. Words in more than ``COMMON`` of the pieces (names, "going") carry no topic."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rows = index.db.execute("SELECT id, kind, source, names, body FROM docs ORDER BY id").fetchall()
    bags = [words_of(body) for *_, body in rows]
    df: Counter[str] = Counter(w for bag in bags for w in bag)
    ceiling = COMMON * len(rows)
    bags = [{w for w in bag if 1 < df[w] <= ceiling} for bag in bags]
    single: Counter[str] = Counter()
    pair: Counter[tuple[str, str]] = Counter()
    windows = 0
    for at, (_, kind, source, names, _) in enumerate(rows):
        context = set(bags[at])
        if kind == "daily":
            for step in range(-WINDOW, WINDOW + 1):
                other = at + step
                if step and 0 <= other < len(rows) and rows[other][2] == source and rows[other][3] == names:
                    context |= bags[other]
        if not bags[at]:
            continue
        windows += 1
        single.update(bags[at])
        pair.update((w, c) for w in bags[at] for c in context if c != w)
    near: dict[str, list[tuple[str, float]]] = {}
    for (w, c), n in pair.items():
        if n < MIN_PAIR:
            continue
        score = math.log(n * windows / (single[w] * df[c] or 1))
        if score > 0:
            near.setdefault(w, []).append((c, score))
    # Ties broken by the word: sets iterate in an order that changes between runs.
    model = Associations({w: sorted(v, key=lambda x: (-x[1], x[0]))[:keep] for w, v in near.items()}, pairs=len(pair))
    model.seconds = time.perf_counter() - started
    model.peak_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # Linux counts in KiB
    return model


def _learned(model: Associations) -> str:
    return f"{model.pairs} pairs in {model.seconds:.2f} s, peak RSS +{model.peak_mb:.0f} MB"


Expander = Callable[[RecallIndex, list[Term], list[rank.Ranked]], list[str]]


def feedback(index: RecallIndex, query_terms: list[Term], ranked: list[rank.Ranked]) -> list[str]:
    """RM3's choice of words: summed over the best pieces, each word's share of the piece times its idf."""
    asked = {t.word for t in query_terms}
    total = max(1, index.doc_count())
    weight: Counter[str] = Counter()
    for r in ranked[:FEEDBACK]:
        found = [w for w in TOKEN.findall(UNSPACED_RUN.sub(" ", r.doc.body.lower())) if w not in STOPWORDS | asked]
        for w, n in Counter(found).items():
            weight[w] += n / len(found)
    df = index.doc_freqs(list(weight))
    scored = {w: s * math.log(total / df[w]) for w, s in weight.items() if 0 < df[w] <= COMMON * total}
    return sorted(scored, key=lambda w: (-scored[w], w))[:EXPAND]


def associates(model: Associations, balanced: bool = False) -> Expander:
    """The words most associated with the query's, summed over its words; ``balanced``: each word of the query
    that has associates gets an equal share of the ``EXPAND`` words, so that a question about two topics
    (multi-hop) is not expanded towards the one with more words."""

    def expand(index: RecallIndex, query_terms: list[Term], ranked: list[rank.Ranked]) -> list[str]:
        asked = [t.word for t in query_terms]
        if balanced:
            lists = [[w for w, _ in model.near.get(word, []) if w not in asked] for word in asked]
            lists = [found for found in lists if found]
            share = math.ceil(EXPAND / len(lists)) if lists else 0
            return list(dict.fromkeys(w for found in lists for w in found[:share]))
        weight: dict[str, float] = {}
        for word in asked:
            for other, score in model.near.get(word, []):
                if other not in asked:
                    weight[other] = weight.get(other, 0.0) + score
        return sorted(weight, key=lambda w: (-weight[w], w))[:EXPAND]

    return expand


def ranked(
    index: RecallIndex,
    text: str,
    options: RecallOptions,
    expand: Expander | None,
    beta: float,
    reach: bool = False,
    local: bool = False,
) -> list[Where]:
    """``search`` without filters, with an expansion fused into each row's bm25 before re-ranking. With ``reach``
    the expansion only re-scores: it adds to the candidates and the lines next to them, and brings in no row of
    its own. With ``local`` no second query is asked: the expansion words a candidate or a line next to one holds
    add their idf, counted in Python."""
    query_terms = terms(text)
    named = period(text, date.fromisoformat(options.today) if options.today else date.today())
    if named is not None and named.relative:
        query_terms = terms(text[: named.start] + " " + text[named.end :]) or query_terms
    plan = plan_terms(index, query_terms)
    if not plan.terms:
        return []
    found = _candidates(index, query_terms, plan, Filters(), CANDIDATES)
    span = index.span(named.first, named.last) if named else None
    if span and named:
        for c in index.search(plan.terms, Filters(), PERIOD_CANDIDATES, rows=span):
            if named.holds(c.doc.ts):
                found.setdefault(c.doc, c)
    q = _question(index, text, query_terms, named, options.person)

    def order(found: dict[Doc, Candidate]) -> list[rank.Ranked]:
        candidates = list(found.values())
        scored = rank.rank(candidates, index.rows(rank.neighbour_ids(candidates)), q)
        return rank.order(scored, q, options.recency)

    out = order(found)
    if expand is not None and beta and local:
        words = set(expand(index, query_terms, out))
        df = index.doc_freqs(sorted(words))
        total = max(1, index.doc_count())
        rows = index.rows(rank.neighbour_ids(list(found.values())))
        rows.update({c.id: c.doc for c in found.values()})
        for row, doc in rows.items():
            score = sum(math.log(total / df[w]) for w in words_of(doc.body) & words if df[w])
            was = found.get(doc)
            if score and (was is not None or not _dup(found, row)):
                found[doc] = Candidate(doc, (was.relevance if was else 0.0) + beta * score, row)
        out = order(found)
    elif expand is not None and beta:
        # Bounded as the first query is: common words dropped, at most the newest ``ROWS`` matches scored.
        extra = plan_terms(index, terms(" ".join(expand(index, query_terms, out))))
        near = {c.id for c in found.values()} | rank.neighbour_ids(list(found.values()))
        newest = ROWS if extra.matches > ROWS else 0
        for c in index.search(extra.terms, Filters(), CANDIDATES, newest=newest) if extra.terms else []:
            was = found.get(c.doc)
            if reach and was is None and c.id not in near:
                continue
            found[c.doc] = Candidate(c.doc, (was.relevance if was else 0.0) + beta * c.relevance, c.id)
        out = order(found)
    return [_where(r.doc) for r in out[: options.limit]]


def _dup(found: dict[Doc, Candidate], row: int) -> bool:
    return any(c.id == row for c in found.values())


def _where(doc: Doc) -> Where:
    lines = (doc.first_line, doc.last_line) if doc.first_line and doc.last_line else None
    return doc.path, lines if doc.kind != "fact" else None, doc.fact_id


Ranker = Callable[[RecallIndex, str, RecallOptions], list[Where]]


def variants(model: Associations, only: str = "") -> dict[str, Ranker]:
    """Today's ranking and each variant whose name holds the pattern ``only`` (all of them when empty)."""

    def today(index: RecallIndex, text: str, options: RecallOptions) -> list[Where]:
        return [(h.path, h.lines, h.id) for h in search(index, text, options).hits]

    found: dict[str, Ranker] = {"vaultsync": today}
    for beta in BETAS:
        found[f"prf {beta}"] = lambda i, t, o, b=beta: ranked(i, t, o, feedback, b)
        found[f"cooc {beta}"] = lambda i, t, o, b=beta: ranked(i, t, o, associates(model), b)
        found[f"prf {beta} reach"] = lambda i, t, o, b=beta: ranked(i, t, o, feedback, b, reach=True)
        found[f"cooc {beta} reach"] = lambda i, t, o, b=beta: ranked(i, t, o, associates(model), b, reach=True)
        found[f"cooc {beta} balanced"] = lambda i, t, o, b=beta: ranked(i, t, o, associates(model, True), b)
        found[f"cooc {beta} balanced local"] = lambda i, t, o, b=beta: ranked(
            i, t, o, associates(model, True), b, local=True
        )
    return {name: run for name, run in found.items() if name == "vaultsync" or re.search(only, name)}


def timed(run: Ranker, index: RecallIndex, text: str, options: RecallOptions, repeat: int) -> tuple[float, list[Where]]:
    """The fastest of ``repeat`` runs (a pause of another process lands on one run) and the hits."""
    best, hits = math.inf, []
    for _ in range(repeat):
        started = time.perf_counter()
        hits = run(index, text, options)
        best = min(best, time.perf_counter() - started)
    return best, hits


def evaluation(repeat: int, only: str) -> None:
    """recall@5/@10 per kind for each variant and plain bm25, and each variant's added time per query."""
    questions, today, index = eval_index(Path(tempfile.mkdtemp(prefix="vaultsync-semantic-")))
    model = learn(index)
    print(f"evaluation set: {len(questions)} questions, cooc learned {_learned(model)}")
    where = {
        i: (p, (a, b) if a else None, f)
        for i, p, a, b, f in index.db.execute("SELECT id, path, first_line, last_line, fact_id FROM docs")
    }
    options = RecallOptions(limit=10, today=today)
    scores: dict[str, dict[str, list[tuple[float, float]]]] = {}
    times: dict[str, list[float]] = {}
    # The variants re-rank with a copy of ``search``'s steps: without an expansion it must give its very hits.
    same = sum(
        ranked(index, q.text, options, None, 0.0) == variants(model)["vaultsync"](index, q.text, options)
        for q in questions
    )
    print(f"the copy of search without an expansion: the same hits on {same} of {len(questions)} questions")
    for q in questions:
        words = [w for w in re.findall(r"[^\W_]+", q.text.lower()) if w not in STOPWORDS]
        base = [where[i] for i in plain_bm25(index.db, " ".join(words), 10)]
        scores.setdefault("plain bm25", {}).setdefault(q.kind, []).append(_hits(q.evidence, base))
        for name, run in variants(model, only).items():
            seconds, hits = timed(run, index, q.text, options, repeat)
            scores.setdefault(name, {}).setdefault(q.kind, []).append(_hits(q.evidence, hits))
            times.setdefault(name, []).append(seconds)
    index.close()
    print(table(scores, times))


def _hits(evidence: list[list[str]], hits: Sequence[Where]) -> tuple[float, float]:
    return _found(evidence, list(hits), 5), _found(evidence, list(hits), 10)


def table(scores: dict[str, dict[str, list[tuple[float, float]]]], times: dict[str, list[float]]) -> str:
    """One row per variant: recall@5/@10 per kind and overall; the added time, paired against today's ranking."""
    kinds = sorted({k for by_kind in scores.values() for k in by_kind})
    head = "| variant | " + " | ".join(kinds) + " | overall | added ms p50 / p95 |"
    lines = [head, "|" + " --- |" * (len(kinds) + 3), "(each cell: recall@5 / recall@10)"]
    for name, by_kind in scores.items():
        every = [x for k in kinds for x in by_kind[k]]
        cells = [_cell(by_kind[k]) for k in kinds] + [_cell(every)]
        added = ""
        if name in times and name != "vaultsync":
            diff = [a - b for a, b in zip(times[name], times["vaultsync"], strict=True)]
            added = f"{pct(diff, 0.5):.2f} / {pct(diff, 0.95):.2f}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {added} |")
    return "\n".join(lines)


def _cell(pairs: list[tuple[float, float]]) -> str:
    return f"{sum(a for a, _ in pairs) / len(pairs):.3f} / {sum(b for _, b in pairs) / len(pairs):.3f}"


def generated(tree: Path, n: int, repeat: int, only: str) -> None:
    """On the generated memory ``benchmarks/recall.py --dir`` left: recall@5 on ``n`` questions made of three words
    of a fact or daily line (as ``recall.py``'s quality), and in-process percentiles on its 300 queries."""
    os.environ.update(GIT_CONFIG_GLOBAL=str(tree / "gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    cfg = configmod.load(tree / "config.toml")
    index = refresh(cfg)
    model = learn(index)
    print(f"generated memory: {index.doc_count()} pieces, cooc learned {_learned(model)}")
    rng = random.Random(7)
    rows = index.db.execute(
        "SELECT id, body, kind, fact_id, path, first_line FROM docs WHERE kind IN ('fact', 'daily') "
        "AND coalesce(status, '') != 'superseded' ORDER BY id"
    ).fetchall()
    rows = rng.sample(rows, min(len(rows), n * 3))
    asked: list[tuple[str, Wanted]] = []
    for _, body, kind, fact_id, path, first in rows:
        words = [w for w in dict.fromkeys(WORD.findall(body.lower())) if w not in STOPWORDS]
        if len(words) >= 3:
            asked.append((" ".join(rng.sample(words, 3)), (path, None, fact_id) if kind == "fact" else (path, first)))
        if len(asked) >= n:
            break
    bodies = rng.sample([r[0] for r in index.db.execute("SELECT body FROM docs ORDER BY id")], 2000)
    speed = [q for _, q in queries(bodies, 300, rng)]
    scores: dict[str, dict[str, list[tuple[float, float]]]] = {}
    times: dict[str, list[float]] = {}
    options = RecallOptions(limit=10)
    today = variants(model)["vaultsync"]
    same = sum(ranked(index, text, options, None, 0.0) == today(index, text, options) for text, _ in asked[:200])
    print(f"the copy of search without an expansion: the same hits on {same} of {len(asked[:200])} questions")
    chosen = variants(model, only)
    for name, run in chosen.items():
        for text, wanted in asked:
            hits = run(index, text, options)
            found = [any(_same(wanted, h) for h in hits[:k]) for k in (5, 10)]
            scores.setdefault(name, {}).setdefault("three words", []).append((float(found[0]), float(found[1])))
    # Each query by every variant in turn, so that the machine's load changes between queries, not variants.
    for text in speed:
        for name, run in chosen.items():
            times.setdefault(name, []).append(timed(run, index, text, options, repeat)[0])
    index.close()
    print(table(scores, times))
    for name, values in times.items():
        print(f"{name}: in-process p50 {pct(values, 0.5):.2f} ms, p95 {pct(values, 0.95):.2f} ms")


def _same(wanted: Wanted, hit: Where) -> bool:
    """A fact by its path and id, a daily-note line by its path and first line (as ``recall.py``'s quality)."""
    if len(wanted) == 3:
        return hit[0] == wanted[0] and hit[1] is None and hit[2] == wanted[2]
    return hit[0] == wanted[0] and hit[1] is not None and hit[1][0] == wanted[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="a tree benchmarks/recall.py --dir left: also measure there")
    parser.add_argument("--quality", type=int, default=1000, help="questions drawn from the generated memory")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timed query; the fastest counts")
    parser.add_argument("--only", default="", help="the variants whose name holds this pattern (e.g. 'balanced')")
    args = parser.parse_args(argv)
    evaluation(args.repeat, args.only)
    if args.dir:
        generated(args.dir, args.quality, args.repeat, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
