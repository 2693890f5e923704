"""Watch mode's latency and idle cost: from saving a fact note in the vault to ``items.json`` holding the edit, with
the default debounce, and the CPU a watching process uses while nothing changes.

Not a test: it prints figures for ``docs/performance.md``. Targets: p95 latency <= 2 s at 50k facts, idle CPU
under 1% of a core.

    .venv/bin/python benchmarks/watch.py --facts 50000 --edits 20 --idle-seconds 60
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARA = {"1 Projects": "projects", "2 Areas": "areas", "3 Resources": "resources", "4 Archives": "archives"}


def _vaultsync(*args: str, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "vaultsync.cli", *args], check=True, env=env, capture_output=True)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _fact_notes(vault: Path, count: int) -> list[Path]:
    notes = sorted(p for folder in PARA for p in (vault / folder).glob("*/*/facts/*.md") if "conflict" not in p.name)
    step = max(1, len(notes) // count)
    return notes[::step][:count]


def _items_of(note: Path, vault: Path, life: Path) -> Path:
    rel = note.relative_to(vault).parts
    return life / PARA[rel[0]] / Path(*rel[1:-2]) / "items.json"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=50000)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="vaultsync-watch-bench-"))
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(root / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"}
    (root / "gitconfig").write_text("")
    generate = [sys.executable, str(HERE / "generate.py"), str(root / "mem"), "--facts", str(args.facts)]
    subprocess.run(generate, check=True)
    config, vault, life = root / "config.toml", root / "vault", root / "mem/life"
    _vaultsync(
        "init", "--workspace", str(root / "mem/workspace"), "--life", str(life), "--vault", str(vault),
        "--config", str(config), env=env,
    )  # fmt: skip
    started = time.monotonic()
    _vaultsync("sync", "--config", str(config), env=env)
    print(f"first import of {args.facts} facts: {time.monotonic() - started:.1f} s", flush=True)

    watcher = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "watch", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(line for line in watcher.stdout or ()), daemon=True).start()
    try:
        while not lines:
            time.sleep(0.05)
        latencies = []
        for n, note in enumerate(_fact_notes(vault, args.edits)):
            items = _items_of(note, vault, life)
            marker = f"watch-bench-{n}"
            seen = len(lines)
            note.write_text(note.read_text(encoding="utf-8").rstrip("\n") + f" {marker}\n", encoding="utf-8")
            saved = time.monotonic()
            while marker not in items.read_text(encoding="utf-8"):
                time.sleep(0.01)
            latencies.append(time.monotonic() - saved)
            while len(lines) == seen:  # the pass's line: it has ended, so the next edit starts a pass of its own
                time.sleep(0.01)
            time.sleep(0.5)
        time.sleep(5)
        cpu_before, wall_before = _cpu_seconds(watcher.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle = (_cpu_seconds(watcher.pid) - cpu_before) / (time.monotonic() - wall_before)
    finally:
        watcher.terminate()
        watcher.wait(timeout=120)
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(f"facts: {args.facts}, edits: {len(latencies)}")
    print(f"save -> items.json: p50 {p50:.2f} s, p95 {p95:.2f} s, max {max(latencies):.2f} s (target p95 <= 2 s)")
    print(f"idle CPU over {args.idle_seconds:.0f} s: {100 * idle:.2f}% of a core (target < 1%)")
    print(f"left in {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
