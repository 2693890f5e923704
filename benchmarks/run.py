"""Run every vaultsync benchmark at a chosen scale and print ratios measured in the same run.

Why ratios: the machines this runs on are shared and noisy, so absolute seconds from two runs (or two
machines) say little. Each benchmark therefore times vaultsync against a reference doing the irreducible part of
the same job, on the same data, interleaved in the same run, and reports the ratio of medians:

* first import: ``vaultsync sync`` on a fresh vault vs ``benchmarks/floor.py`` (plain f-string notes at the same
  paths, then ``git add -A`` and ``git commit``); target <= 1.3x;
* no-change pass: ``vaultsync sync`` with nothing to do vs ``git status --porcelain`` on the same vault;
  target <= 1.5x, Python start-up included;
* small-change pass: one fact edited in the vault, one fact added by the agent, one line appended to the newest
  daily note, vs the no-change pass; target <= 1.5x, commits included;
* growth: first-import (and no-change) seconds per fact, a larger memory's within 1.3x of a smaller one's;
* peak memory: the max RSS of the vaultsync process tree (its git children included) under 300 MB at 200k facts.

Every timed run is a subprocess (start-up is part of what a person waits for), in a fresh temp dir per
scenario, with ``GIT_CONFIG_GLOBAL`` pointed at an empty file so a developer's git config (hooks, fsmonitor,
signing) cannot skew one side. Caches are dropped before each timed run when the OS allows it.

The first-import, no-change and small-change targets are judged at 50k facts, the size they are set for, and
the memory target at 200k; the other scales print their ratios for information.

Usage: ``.venv/bin/python benchmarks/run.py --scale small`` (about 1-2 minutes) or ``--scale full``
(5k/50k/200k facts; long). ``--write-docs`` rewrites the "Latest results" part of ``docs/performance.md``
(between its markers; the text around them is kept).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from measure import DOCS, PROFILE_FACTS, ROOT, SCALES, Bench, Repeats, Row, ScaleResult, drop_caches
from report import generated_docs, machine, portable, print_table, rows_for, write_docs
from scenarios import run_scale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the vaultsync benchmarks and print ratios with PASS/FAIL.")
    parser.add_argument("--scale", choices=sorted(SCALES), default="small", help="small: 5k facts; full: 5k/50k/200k")
    parser.add_argument("--max-facts", type=int, help="skip scales above this many facts")
    parser.add_argument("--repeats", type=int, help="override the repeats of every scenario")
    parser.add_argument("--budget-minutes", type=float, help="skip a scale whose estimated time exceeds what is left")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before one child run is killed")
    parser.add_argument("--warm", action="store_true", help="do not drop the page cache before timed runs")
    parser.add_argument("--profile", action="store_true", help="cProfile one no-change pass at the largest scale")
    parser.add_argument("--write-docs", action="store_true", help=f"write {DOCS.relative_to(ROOT)}")
    parser.add_argument("--json", type=Path, help="also write every measurement to this JSON file")
    parser.add_argument("--tmp", type=Path, help="where the temp dirs go (default: the system temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs")
    parser.add_argument("--live", action="store_true", help="run vaultsync/ in place instead of a snapshot of it")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    plan = SCALES[args.scale]
    skipped = [
        f"{f // 1000}k facts (over --max-facts {args.max_facts})" for f in plan if args.max_facts and f > args.max_facts
    ]
    scales = {f: r for f, r in plan.items() if not args.max_facts or f <= args.max_facts}
    if args.repeats:
        scales = {f: Repeats(args.repeats, args.repeats, args.repeats) for f in scales}
    cold = not args.warm and drop_caches()
    cache = (
        "cold: dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`) before every timed run"
        if cold
        else "warm: the page cache was not dropped"
        + (" (--warm)" if args.warm else " (not permitted here: drop_caches could not be written)")
    )
    info = machine()
    called = [sys.executable, *sys.argv] if argv is None else ["benchmarks/run.py", *argv]
    command = shlex.join(portable(arg) for arg in called)
    print(f"vaultsync benchmarks, scale {args.scale}: {', '.join(str(f) for f in scales)} facts; cache {cache}")
    print(f"machine: {json.dumps(info)}")

    tmp = Path(tempfile.mkdtemp(prefix="vaultsync-bench-", dir=args.tmp))
    bench = Bench(tmp, cold, args.timeout)
    results: list[ScaleResult] = []
    profile: tuple[int, str] | None = None
    profiled = max((f for f in scales if f <= PROFILE_FACTS), default=min(scales, default=0))

    def report(final: bool) -> list[Row]:
        rows = rows_for(results)
        pending = [
            f"{f // 1000}k facts (the run stopped before it)" for f in scales if f not in {r.facts for r in results}
        ]
        if args.write_docs:
            shown_skips = skipped + ([] if final else pending)
            elapsed = time.perf_counter() - started
            write_docs(DOCS, generated_docs(rows, results, shown_skips, info, cache, command, elapsed))
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=2))
        return rows

    try:
        if not args.live:
            print(f"vaultsync under test: {bench.snapshot()}")
        info["vaultsync"] += f"; ran {bench.source}"
        for facts, repeats in scales.items():
            estimate = _estimate(results, facts, repeats)
            left = None if args.budget_minutes is None else args.budget_minutes * 60 - (time.perf_counter() - started)
            if left is not None and estimate is not None and estimate > left:
                why = f"{facts // 1000}k facts (estimated {estimate / 60:.0f} min from the smaller scale's per-fact"
                skipped.append(why + f" times, over the {args.budget_minutes:.0f} min budget)")
                print(f"\n== skipping {facts} facts: estimated {estimate / 60:.0f} min > {left / 60:.0f} min left")
                continue
            res, prof = run_scale(bench, facts, repeats, args.profile and facts == profiled)
            results.append(res)
            if prof:
                profile = (facts, prof)
            report(final=False)
    except KeyboardInterrupt:
        print("\ninterrupted: reporting what was measured", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    rows = report(final=True)
    print()
    print_table(rows)
    for res in results:
        for failure in res.failures:
            print(f"[{res.facts}] ERROR: {failure}")
        for note in res.notes:
            print(f"[{res.facts}] note: {note}")
    if profile:
        print(f"\nno-change pass at {profile[0]} facts under cProfile (top 15 by cumulative time):\n{profile[1]}")
    if skipped:
        print("not measured: " + "; ".join(skipped))
    print(f"cache: {cache}; total {timedelta(seconds=round(time.perf_counter() - started))}")
    if args.write_docs:
        print(f"wrote {DOCS}")
    return 1 if any(r.failures for r in results) else 0


def _estimate(done: list[ScaleResult], facts: int, repeats: Repeats) -> float | None:
    """Seconds a scale should take, scaling the largest finished scale's per-fact times linearly (optimistic)."""
    if not done:
        return None
    prev = max(done, key=lambda r: r.facts)
    per = {k: (prev.median(k) or 0.0) / prev.facts for k in prev.runs}
    first = per.get("vaultsync first import", 0) + per.get("floor first import", 0)
    total = first * repeats.first_import + per.get("vaultsync no-change", 0) * (repeats.no_change + 1)
    total += per.get("vaultsync small change", 0) * repeats.small_change
    return total * facts


if __name__ == "__main__":
    sys.exit(main())
