"""Benchmark the local API: remember -> fact note written and committed, over HTTP on loopback.

Generates a memory tree (``benchmarks/generate.py``), makes a vault of it with ``vaultsync init`` and a first
``sync``, starts ``vaultsync serve`` on a free port, then times ``POST /facts`` calls one after another, each
to another entity. A call returns only after its pass committed the new note, so its latency is the whole
remember -> note committed path. Target: p95 <= 1 s at 50k facts.

Usage: ``python benchmarks/api.py --facts 50000 [--calls 50] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
TOKEN = "benchmark-token-" + "b" * 40


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(*args: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="vaultsync-api-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(root / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
    env["VAULTSYNC_TOKEN"] = TOKEN
    (root / "gitconfig").touch()
    tree = root / "tree"
    if not tree.exists():
        _run(str(HERE / "generate.py"), str(tree), "--facts", str(args.facts), env=env)
    config = root / "config.toml"
    if not config.exists():
        init = ["-m", "vaultsync.cli", "init", "--workspace", str(tree / "workspace"), "--life", str(tree / "life")]
        _run(*init, "--vault", str(root / "vault"), "--config", str(config), env=env)
        first = _run("-m", "vaultsync.cli", "sync", "--config", str(config), env=env)
        print(f"first sync: {first:.1f} s")
    port = _free_port()
    serve = ["-m", "vaultsync.cli", "serve", "--config", str(config), "--port", str(port)]
    server = subprocess.Popen([sys.executable, *serve], env=env)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
            rels = [e["entity"] for e in client.get("/entities").json()["entities"]]
            picks = random.Random(0).sample(rels, min(args.calls, len(rels)))
            times = []
            for n, rel in enumerate(picks):
                start = time.perf_counter()
                r = client.post("/facts", json={"entity": rel, "fact": f"Benchmark fact {n}", "source": "benchmark"})
                times.append(time.perf_counter() - start)
                if r.status_code != 201 or not r.json()["commits"]:
                    raise SystemExit(f"remember failed: {r.status_code} {r.text}")
    finally:
        server.terminate()
        server.wait()
    times.sort()
    p95 = times[max(0, round(0.95 * len(times)) - 1)]
    result = {
        "facts": args.facts,
        "entities": len(rels),
        "calls": len(times),
        "p50_s": round(statistics.median(times), 3),
        "p95_s": round(p95, 3),
        "max_s": round(times[-1], 3),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
