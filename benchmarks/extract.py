"""Benchmark extraction's filing of proposals: does the time per proposal stay flat as an answer grows?

Makes a small memory (one person, one daily note of as many lines as proposals), points ``[extract] command``
at a script that proposes one fact per line for that person, and times ``vaultsync extract --dry-run`` (the
answer read and checked, every proposal given its id in the entity's own pattern; nothing written, no pass)
for a small and a ten times larger answer. Prints the seconds of each and the ratio of time per proposal,
large over small: about 1 when filing is linear (target <= 1.5), about 10 when it is quadratic.

Usage: ``python benchmarks/extract.py [--small 1000] [--large 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from vaultsync import config as configmod

PROPOSE = """import json, sys
sys.stdin.read()
n = int(sys.argv[1])
print(json.dumps([{"entity": "areas/people/sarah", "fact": f"Sarah said thing {i}", "note": "memory/2026-12-01.md",
                   "source_line": i, "category": "context"} for i in range(1, n + 1)]))
"""


def _tree(root: Path, lines: int) -> Path:
    """A memory with one person of a few facts and a daily note of ``lines`` lines; returns its config."""
    workspace, life = root / "workspace", root / "life"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "memory/2026-12-01.md").write_text("".join(f"- line {i}\n" for i in range(1, lines + 1)))
    person = life / "areas/people/sarah"
    person.mkdir(parents=True)
    facts = [{"id": f"sarah-{i:03d}", "fact": f"Sarah fact {i}", "timestamp": "2026-11-01"} for i in range(1, 6)]
    (person / "items.json").write_text(json.dumps(facts, indent=2))
    (person / "summary.md").write_text("# Sarah\n")
    config = root / "config.toml"
    env = _env(root)
    cli = [sys.executable, "-m", "vaultsync.cli"]
    init = [*cli, "init", "--workspace", str(workspace), "--life", str(life), "--vault", str(root / "vault")]
    subprocess.run([*init, "--config", str(config)], check=True, env=env, capture_output=True)
    subprocess.run([*cli, "sync", "--config", str(config)], check=True, env=env, capture_output=True)
    (root / "propose.py").write_text(PROPOSE)
    command = f"{sys.executable} {root / 'propose.py'} {lines}"
    loaded = configmod.load(config)
    config.write_text(configmod.dumps(replace(loaded, extract=configmod.Extract(command=command))))
    return config


def _env(root: Path) -> dict[str, str]:
    (root / "gitconfig").touch()
    return {**os.environ, "GIT_CONFIG_GLOBAL": str(root / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}


def _time(root: Path, config: Path, repeat: int, expected: int) -> float:
    argv = [sys.executable, "-m", "vaultsync.cli", "extract", "--dry-run", "--json", "--config", str(config)]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, env=_env(root), capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"extract exited {done.returncode}: {done.stderr.strip()[-500:]}")
        ids = [p["id"] for p in json.loads(done.stdout)["proposed"]]
        if len(set(ids)) != expected:
            raise SystemExit(f"expected {expected} distinct ids, got {len(set(ids))}")
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vaultsync-extract-") as tmp:
        seconds = {}
        for n in (args.small, args.large):
            root = Path(tmp) / str(n)
            root.mkdir()
            seconds[n] = _time(root, _tree(root, n), args.repeat, n)
    ratio = (seconds[args.large] / args.large) / (seconds[args.small] / args.small)
    print(
        json.dumps(
            {
                "proposals": [args.small, args.large],
                "seconds": [round(seconds[args.small], 2), round(seconds[args.large], 2)],
                "per_proposal_ratio": round(ratio, 2),
                "target": 1.5,
                "ok": ratio <= 1.5,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
