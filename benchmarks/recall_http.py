"""Recall over the local HTTP API: p50 and p95 of ``GET /recall`` on loopback, the server's own open index
included (its refresh at most once a second), against the same queries in-process.

Usage: ``.venv/bin/python benchmarks/recall_http.py --dir DIR`` where DIR is a ``benchmarks/recall.py --dir``
folder (its ``config.toml`` names a synced 50k-fact vault). Percentiles, not timed tests: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall import pct, queries
from serving import running_serve

from vaultsync import config as configmod
from vaultsync.app.recall import RecallOptions, search
from vaultsync.write_path.recall_refresh import refresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    config = args.dir / "config.toml"
    cfg = configmod.load(config)
    index = refresh(cfg)
    rows = [r[0] for r in index.db.execute("SELECT body FROM docs WHERE kind IN ('fact', 'daily') ORDER BY id")]
    asked = queries(rows, args.queries, random.Random(0))
    inproc = []
    for _, text in asked:
        started = time.perf_counter()
        search(index, text, RecallOptions())
        inproc.append(time.perf_counter() - started)
    index.close()
    with running_serve(config) as server:
        base, headers = server.base, server.headers
        urllib.request.urlopen(urllib.request.Request(f"{base}/recall?q=warm", headers=headers)).read()
        over_http = []
        for _, text in asked:
            url = f"{base}/recall?" + urllib.parse.urlencode({"q": text})
            started = time.perf_counter()
            urllib.request.urlopen(urllib.request.Request(url, headers=headers)).read()
            over_http.append(time.perf_counter() - started)
    print(
        json.dumps(
            {
                "queries": len(asked),
                "in_process_ms": {"p50": round(pct(inproc, 0.5), 2), "p95": round(pct(inproc, 0.95), 2)},
                "http_ms": {"p50": round(pct(over_http, 0.5), 2), "p95": round(pct(over_http, 0.95), 2)},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
