"""Answers over one kept-alive connection, the way the plugins connect (Node's ``fetch``, Obsidian's ``requestUrl``),
against a fresh connection per request, in the same run: ``GET /health``, ``GET /recall`` and ``GET /context``
against a real ``vaultsync serve``. Target: on each route the kept-alive median is at most 1.2x the
fresh-connection one (a connection reused saves a handshake; a ratio far above 1 is an answer's body waiting
for the client's delayed ACK, 40 ms on Linux); the p95 ratio is printed beside it.

Usage: ``.venv/bin/python benchmarks/keepalive.py --dir DIR [--facts 50000] [--requests 200]`` where DIR holds a
``config.toml`` naming a synced vault (a ``benchmarks/recall.py --dir`` or ``benchmarks/api.py --keep`` folder);
when it has none, a memory of ``--facts`` facts is generated there and synced first. Percentiles, not timed
tests: the machine is shared, so the two ways are interleaved request by request and judged by their ratio.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openclaw_recall import messages
from recall import pct, queries
from serving import running_serve

from vaultsync import config as configmod
from vaultsync.write_path.recall_refresh import refresh

HERE = Path(__file__).resolve().parent
TARGET = 1.2  # kept-alive median over fresh median


def prepare(folder: Path, facts: int) -> Path:
    """The ``config.toml`` in ``folder``; a generated memory made into a synced vault there when it has none."""
    config = folder / "config.toml"
    if config.exists():
        return config
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gitconfig").touch()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(folder / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
    tree = folder / "tree"

    def run(*args: str) -> None:
        subprocess.run([sys.executable, *args], check=True, env=env, stdout=subprocess.DEVNULL)

    if not tree.exists():
        run(str(HERE / "generate.py"), str(tree), "--facts", str(facts))
    init = ["-m", "vaultsync.cli", "init", "--workspace", str(tree / "workspace"), "--life", str(tree / "life")]
    run(*init, "--vault", str(folder / "vault"), "--config", str(config))
    run("-m", "vaultsync.cli", "sync", "--config", str(config))
    return config


def paths(cfg: configmod.Config, n: int) -> dict[str, list[str]]:
    """``n`` requests per route: words drawn from the memory for recall, a person's messages for context."""
    index = refresh(cfg)
    rows = [r[0] for r in index.db.execute("SELECT body FROM docs WHERE kind IN ('fact', 'daily') ORDER BY id")]
    index.close()
    words = [text for _, text in queries(rows, n, random.Random(0))]
    return {
        "/health": ["/health"] * n,
        "/recall": ["/recall?" + urllib.parse.urlencode({"q": text}) for text in words],
        "/context": ["/context?" + urllib.parse.urlencode({"q": text}) for text in messages(cfg, n)],
    }


def timed(conn: http.client.HTTPConnection, path: str, headers: dict[str, str]) -> float:
    started = time.perf_counter()
    conn.request("GET", path, headers=headers)
    answer = conn.getresponse()
    answer.read()
    elapsed = time.perf_counter() - started
    if answer.status != 200:
        raise SystemExit(f"GET {path} answered {answer.status}")
    return elapsed


def ms(seconds: list[float]) -> dict[str, float]:
    return {"p50": round(pct(seconds, 0.5), 2), "p95": round(pct(seconds, 0.95), 2)}


def compare(port: int, headers: dict[str, str], route: list[str]) -> dict[str, object]:
    """Each request once over the one kept-alive connection and once over a fresh one, alternating."""
    kept = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    fresh_headers = {**headers, "Connection": "close"}
    reused: list[float] = []
    fresh: list[float] = []
    try:
        timed(kept, route[0], headers)  # opens the connection; its handshake is the fresh side's cost
        for path in route:
            reused.append(timed(kept, path, headers))
            one = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                fresh.append(timed(one, path, fresh_headers))
            finally:
                one.close()
    finally:
        kept.close()
    ratio = {q: round(pct(reused, v) / pct(fresh, v), 2) for q, v in (("p50", 0.5), ("p95", 0.95))}
    return {
        "kept_alive_ms": ms(reused),
        "fresh_ms": ms(fresh),
        "ratio": ratio,
        "result": "ok" if ratio["p50"] <= TARGET else "MISS",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--facts", type=int, default=50_000, help="when DIR holds no config.toml: memory to generate")
    parser.add_argument("--requests", type=int, default=200, help="per route and per way of connecting")
    args = parser.parse_args()
    config = prepare(args.dir, args.facts)
    routes = paths(configmod.load(config), args.requests)
    with running_serve(config) as server:
        port = int(server.base.rsplit(":", 1)[1])
        results = {name: compare(port, server.headers, route) for name, route in routes.items()}
    print(json.dumps({"requests": args.requests, "target": f"p50 ratio <= {TARGET}", "routes": results}, indent=2))


if __name__ == "__main__":
    main()
