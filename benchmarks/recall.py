"""Recall and history at scale: query percentiles in-process and through the CLI, the cost of keeping the index
current after a small change, one fact's history over a long history, and recall@5 against plain BM25; Chinese
questions made from the memory's Chinese text are timed apart (``in_process_unspaced_question_ms``).
``--eval-only`` scores the English evaluation set (``recall_eval.py``) and the Chinese one (``recall_eval_zh.py``).

Usage: ``.venv/bin/python benchmarks/recall.py [--facts 50000] [--queries 300] [--cli-queries 40] [--dir DIR]
[--refresh N]``.
It writes a tree with ``generate.py`` (1,000 daily notes at 50k facts), syncs it into a fresh vault with git's
global config switched off, and prints one line per measurement. Percentiles, not timed tests: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate, scale_args
from recall_eval import build as build_eval
from recall_eval_zh import build as build_eval_zh

from vaultsync import config as configmod
from vaultsync.app.history import history
from vaultsync.app.init import init_vault
from vaultsync.app.recall import (
    CANDIDATES,
    RecallOptions,
    _candidates,
    plan_terms,
    search,
)
from vaultsync.app.sync import sync
from vaultsync.state.files import StateFiles
from vaultsync.state.recall import Filters, RecallIndex
from vaultsync.state.recall_query import STOPWORDS, UNSPACED_RUN, terms
from vaultsync.write_path.recall_refresh import refresh, refresh_after_pass

WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")
MEASURES = ("r1", "r5", "r10", "mrr")
# The Chinese set's kinds whose questions share a word with their fact (the others need more than words).
LEXICAL_ZH = ("who", "when", "which", "entity-less", "shares-a-word")
ASKED_ZH = ("是什么时候?", "是哪天?", "吗?", "是谁的?")  # how ``unspaced_questions`` end


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def queries(rows: list[str], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """One-word, three-word and phrase (four consecutive words) queries drawn from the memory's own text."""
    out: list[tuple[str, str]] = []
    while len(out) < n:
        words = rng.choice(rows).split()
        if len(words) < 4:
            continue
        shape = ("one", "three", "phrase")[len(out) % 3]
        if shape == "one":
            out.append((shape, rng.choice(words)))
        elif shape == "three":
            out.append((shape, " ".join(rng.sample(words, 3))))
        else:
            i = rng.randrange(len(words) - 3)
            out.append((shape, " ".join(words[i : i + 4])))
    return out


def unspaced_questions(rows: list[str], n: int, rng: random.Random) -> list[str]:
    """Questions in Chinese made from the memory's own Chinese runs: two pieces of one run around a particle,
    then a question word ("工厂的参观是哪天"), as a person asks them rather than as the text says it."""
    runs = [r for row in rows for r in re.findall("[\u4e00-\u9fff]{6,}", row)]
    out = []
    for run in rng.sample(runs, min(n, len(runs))):
        i = rng.randrange(len(run) - 5)
        out.append(run[i : i + 2] + "的" + run[i + 3 : i + 6] + rng.choice(ASKED_ZH))
    return out


def candidates_only(index: RecallIndex, text: str) -> float:
    """Seconds to find a query's bm25 candidates alone, as ``search`` does before re-ranking them."""
    started = time.perf_counter()
    query_terms = terms(text)
    plan = plan_terms(index, query_terms)
    if plan.terms:
        _candidates(index, query_terms, plan, Filters(), CANDIDATES)
    return time.perf_counter() - started


def plain_bm25(db: object, text: str, limit: int) -> list[int]:
    """The baseline: every word ORed, bm25 over the text alone, no pruning, no status or recency. A run of an
    unspaced script is its pairs of characters, each ORed in the column that holds them (FTS5 alone would read
    the run as one word, which no text holds)."""
    words = [w for w in re.findall(r"[^\W_]+", UNSPACED_RUN.sub(" ", text.lower()))][:64]
    pairs = [r[i : i + 2] for r in UNSPACED_RUN.findall(text.lower()) for i in range(max(1, len(r) - 1))][:64]
    match = " OR ".join([f'{{body}} : "{w}"' for w in words] + [f'{{grams}} : "{p}"' for p in pairs])
    if not match:
        return []
    sql = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts, 1, 0, 0, 1) LIMIT ?"
    return [r[0] for r in db.execute(sql, (match, limit))]  # type: ignore[attr-defined]


def quality(index: object, rng: random.Random, n: int) -> dict[str, float]:
    """recall@5 for questions made from a fact or daily-note line: a few of its distinctive words, shuffled."""
    db = index.db  # type: ignore[attr-defined]
    rows = db.execute(
        "SELECT id, body, kind, fact_id, path, first_line FROM docs WHERE kind IN ('fact', 'daily') "
        "AND coalesce(status, '') != 'superseded' ORDER BY id"
    ).fetchall()
    rows = rng.sample(rows, min(len(rows), n * 3))  # seeded, so two runs on one memory ask the same questions
    ours = base = asked = 0
    for rowid, body, kind, fact_id, path, first in rows:
        words = [w for w in dict.fromkeys(WORD.findall(body.lower())) if w not in STOPWORDS]
        if len(words) < 3:
            continue
        question = " ".join(rng.sample(words, 3))
        hits = search(index, question, RecallOptions(limit=5)).hits  # type: ignore[arg-type]
        ours += any(
            (h.id == fact_id and h.path == path)
            if kind == "fact"
            else (h.path == path and h.lines and h.lines[0] == first)
            for h in hits
        )
        base += rowid in plain_bm25(db, question, 5)
        asked += 1
        if asked >= n:
            break
    return {"questions": asked, "recall@5": ours / asked, "plain_bm25_recall@5": base / asked}


def _matches(evidence: str, path: str, lines: tuple[int, int] | None, fact_id: str | None) -> bool:
    if ":" in evidence:
        where, line = evidence.rsplit(":", 1)
        return path == where and bool(lines) and lines[0] <= int(line) <= lines[1]  # type: ignore[index]
    return fact_id == evidence


def _found(evidence: list[list[str]], hits: list[tuple[str, tuple[int, int] | None, str | None]], k: int) -> float:
    """The share of the question's hops with some evidence among the first ``k`` hits."""
    return sum(any(_matches(e, *h) for h in hits[:k] for e in hop) for hop in evidence) / len(evidence)


def _reciprocal(evidence: list[list[str]], hits: list[tuple[str, tuple[int, int] | None, str | None]]) -> float:
    """Each hop's 1 / the rank of its first evidence among the hits (0 when none is), averaged over the hops."""
    ranks = [next((1 / n for n, h in enumerate(hits, 1) if any(_matches(e, *h) for e in hop)), 0.0) for hop in evidence]
    return sum(ranks) / len(ranks)


def eval_index(root: Path, build: Callable[[Path], list[Any]] = build_eval) -> tuple[list[Any], str, RecallIndex]:
    """An evaluation set (``recall_eval``'s unless ``build`` says) written under ``root``: its questions, the day
    they are asked on, and its index."""
    questions = build(root / "mem")
    today = json.loads((root / "mem/questions.json").read_text(encoding="utf-8"))["today"]
    init_vault(root / "mem/workspace", root / "mem/life", root / "vault", root / "config.toml")
    cfg = configmod.load(root / "config.toml")
    StateFiles(cfg.state_dir).recall.unlink(missing_ok=True)
    return questions, today, refresh(cfg)


def evaluate(tmp: Path, build: Callable[[Path], list[Any]] = build_eval) -> dict[str, dict[str, float]]:
    """recall@1, @5, @10 and the mean reciprocal rank (over the first 10) per question kind on an evaluation set
    (``recall_eval``'s unless ``build`` says), vaultsync against plain bm25 (every word but stop words ORed, bm25
    over the text, one row per daily-note line and per fact) on the same index."""
    questions, today, index = eval_index(tmp / "eval", build)
    db = index.db
    where = {
        i: (p, (a, b) if a else None, f)
        for i, p, a, b, f in db.execute("SELECT id, path, first_line, last_line, fact_id FROM docs")
    }
    scores: dict[str, dict[str, list[float]]] = {}
    for q in questions:
        ours = [(h.path, h.lines, h.id) for h in search(index, q.text, RecallOptions(limit=10, today=today)).hits]
        words = [w for w in re.findall(r"[^\W_]+", q.text.lower()) if w not in STOPWORDS]
        base = [where[i] for i in plain_bm25(db, " ".join(words), 10)]
        row = scores.setdefault(q.kind, {"n": [], **{n + m: [] for n in ("", "bm25_") for m in MEASURES}})
        row["n"].append(1)
        for name, hits in (("", ours), ("bm25_", base)):
            for k in (1, 5, 10):
                row[f"{name}r{k}"].append(_found(q.evidence, hits, k))
            row[name + "mrr"].append(_reciprocal(q.evidence, hits))
    index.close()
    table = {
        kind: {k: (len(v) if k == "n" else round(sum(v) / len(v), 3)) for k, v in row.items()}
        for kind, row in sorted(scores.items())
    }
    table["overall"] = {"n": len(questions)}
    for name in (n + m for n in ("", "bm25_") for m in MEASURES):
        every = [x for row in scores.values() for x in row[name]]
        table["overall"][name] = round(sum(every) / len(every), 3)
    return table


def evaluate_zh(tmp: Path) -> dict[str, dict[str, float]]:
    """``evaluate`` on ``recall_eval_zh``'s Chinese set, with the kinds whose questions share a word with their
    fact together (``shares a word, overall``): the ones a lexical ranking is judged on."""
    table = evaluate(tmp, build_eval_zh)
    lexical = [table[k] for k in LEXICAL_ZH if k in table]
    n = sum(row["n"] for row in lexical)
    table["shares a word, overall"] = {"n": n} | {
        m: round(sum(row[m] * row["n"] for row in lexical) / n, 3) for m in lexical[0] if m != "n"
    }
    return table


def long_history(vault: Path, notes: list[str], commits: int, rng: random.Random) -> str:
    """``commits`` more commits, each editing one fact note, made with git fast-import (a pass each would take
    hours); returns the note edited most often."""
    lines = []
    head = subprocess.run(["git", "-C", str(vault), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    target = notes[0]
    for i in range(commits):
        path = target if i % 50 == 0 else rng.choice(notes)
        text = (vault / path).read_text(encoding="utf-8") + f"\nedit {i}\n"
        data = text.encode()
        msg = f"vault -> memory: edit {i}".encode()
        lines.append(b"commit refs/heads/main\n")
        lines.append(f"author Nora <nora@example.com> {1700000000 + i} +0000\n".encode())
        lines.append(f"committer Nora <nora@example.com> {1700000000 + i} +0000\n".encode())
        lines.append(b"data %d\n%s\n" % (len(msg), msg))
        if i == 0:
            lines.append(f"from {head.strip()}\n".encode())
        lines.append(f"M 100644 inline {path}\n".encode() + b"data %d\n%s\n" % (len(data), data))
    subprocess.run(["git", "-C", str(vault), "fast-import", "--quiet"], input=b"".join(lines), check=True)
    return target


def small_changes(cfg: configmod.Config, rounds: int) -> float:
    """The median time of the refresh a pass makes after a small change (one entity's facts edited, one line
    added to the newest daily note), over ``rounds`` changes, each to another entity. The files are written just
    before, as a pass leaves them; each round waits until they are old enough for their stat to be trusted, so
    it measures its own change only."""
    entities = sorted(cfg.life.glob("areas/*/*/items.json"))
    newest = sorted((cfg.workspace / "memory").glob("2*.md"))[-1]
    spent = []
    for n in range(rounds):
        items = entities[n * 7 % len(entities)]
        facts = json.loads(items.read_text(encoding="utf-8"))
        (facts if isinstance(facts, list) else facts.get("facts", facts.get("items")))[0]["fact"] += " (checked)"
        items.write_text(json.dumps(facts, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        newest.write_text(newest.read_text(encoding="utf-8") + f"- one more line {n}\n", encoding="utf-8")
        started = time.perf_counter()
        refresh_after_pass(cfg)
        spent.append(time.perf_counter() - started)
        time.sleep(2.1 if n + 1 < rounds else 0)
    return round(statistics.median(spent), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cli-queries", type=int, default=40)
    parser.add_argument("--quality", type=int, default=300, help="questions drawn from the generated memory")
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each in-process query; the fastest counts")
    parser.add_argument(
        "--dir",
        type=Path,
        help="write the trees here, or, when a run left them here already, query them again without the small "
        "change and the history (for comparing query plans on one memory)",
    )
    parser.add_argument("--eval-only", action="store_true", help="only the evaluation set's recall@k table")
    parser.add_argument(
        "--refresh",
        type=int,
        default=0,
        help="small changes to time the refresh after (their median); with a --dir already written, none unless given",
    )
    args = parser.parse_args()
    rng = random.Random(7)
    tmp = args.dir or Path(tempfile.mkdtemp(prefix="vaultsync-recall-"))
    if args.eval_only:
        english = evaluate(Path(tempfile.mkdtemp(prefix="vaultsync-eval-")))
        chinese = evaluate_zh(Path(tempfile.mkdtemp(prefix="vaultsync-eval-zh-")))
        print(json.dumps({"english": english, "chinese": chinese}, indent=1, ensure_ascii=False))
        return 0
    again = (tmp / "config.toml").exists()
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "gitconfig").write_text("")
    os.environ.update(GIT_CONFIG_GLOBAL=str(tmp / "gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    if not again:
        generate(tmp / "mem", **scale_args(args.facts))
        init_vault(tmp / "mem/workspace", tmp / "mem/life", tmp / "vault", tmp / "config.toml")
    cfg = configmod.load(tmp / "config.toml")
    if not again:
        sync(cfg)
    result: dict[str, object] = {"facts": args.facts}

    StateFiles(cfg.state_dir).recall.unlink(missing_ok=True)  # built below from scratch, with the code as it is
    started = time.perf_counter()
    index = refresh(cfg)
    result["build_s"] = round(time.perf_counter() - started, 2)
    result["docs"] = index.doc_count()
    started = time.perf_counter()
    refresh(cfg).close()
    result["refresh_no_change_s"] = round(time.perf_counter() - started, 3)

    bodies = rng.sample([r[0] for r in index.db.execute("SELECT body FROM docs ORDER BY id")], 2000)
    asked = queries(bodies, args.queries, rng)
    # Each query runs --repeat times and its fastest run counts: on a shared machine a pause of another
    # process lands on one run, not on all of them; the first runs alone are printed too.
    times: dict[str, list[float]] = {"one": [], "three": [], "phrase": []}
    first: list[float] = []
    rerank: list[float] = []
    for shape, q in asked:
        runs, bm25_only = [], []
        for _ in range(max(1, args.repeat)):
            t = time.perf_counter()
            search(index, q, RecallOptions())
            runs.append(time.perf_counter() - t)
            bm25_only.append(candidates_only(index, q))
        times[shape].append(min(runs))
        first.append(runs[0])
        rerank.append(max(0.0, min(runs) - min(bm25_only)))
    every = [x for v in times.values() for x in v]
    result["in_process_ms"] = {"p50": round(pct(every, 0.5), 2), "p95": round(pct(every, 0.95), 2)}
    # What re-ranking adds to a query, paired query by query, so the machine's load cancels out.
    result["rerank_ms"] = {"p50": round(pct(rerank, 0.5), 2), "p95": round(pct(rerank, 0.95), 2)}
    result["in_process_first_run_ms"] = {"p50": round(pct(first, 0.5), 2), "p95": round(pct(first, 0.95), 2)}
    for shape, values in times.items():
        result[f"in_process_{shape}_ms"] = {"p50": round(pct(values, 0.5), 2), "p95": round(pct(values, 0.95), 2)}
    # Chinese questions apart, so that the percentiles above stay comparable with earlier runs.
    zh = []
    for q in unspaced_questions(bodies, 100, random.Random(3)):
        runs = []
        for _ in range(max(1, args.repeat)):
            t = time.perf_counter()
            search(index, q, RecallOptions())
            runs.append(time.perf_counter() - t)
        zh.append(min(runs))
    result["in_process_unspaced_question_ms"] = {"p50": round(pct(zh, 0.5), 2), "p95": round(pct(zh, 0.95), 2)}
    cli = []
    for _, q in asked[: args.cli_queries]:
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "vaultsync.cli", "recall", q, "--json", "--config", str(tmp / "config.toml")]
        subprocess.run(cmd, capture_output=True, check=True)
        cli.append(time.perf_counter() - t)
    result["cli_ms"] = {"p50": round(pct(cli, 0.5)), "p95": round(pct(cli, 0.95))}
    result["quality"] = quality(index, rng, args.quality)
    index.close()
    if again:
        if args.refresh:
            result["refresh_small_change_s"] = small_changes(cfg, args.refresh)
        print(json.dumps(result, indent=2))
        return 0

    result["refresh_small_change_s"] = small_changes(cfg, max(1, args.refresh))

    vault = tmp / "vault"
    notes = [p.relative_to(vault).as_posix() for p in vault.glob("2 Areas/people/*/facts/*.md")][:5000]
    target = long_history(vault, notes, args.commits, rng)
    fact = Path(target).stem
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        found = history(cfg, fact)
        runs.append(time.perf_counter() - t)
    result["history_one_fact_s"] = {"median": round(statistics.median(runs), 3), "changes": len(found.changes)}
    print(json.dumps(result, indent=2))
    print(f"(trees and vault left in {tmp})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
