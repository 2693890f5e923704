"""The results as a person reads them: the table of ratios against their targets, the machine they were
measured on, and the generated part of docs/performance.md."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime
from pathlib import Path

from measure import PEAK_RSS_SCALE, PEAK_RSS_TARGET_MB, PYTHON, ROOT, TARGET_SCALE, TARGETS, Row, ScaleResult


def _fmt(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f} s"


def _verdict(ratio: float | None, target: float, failed: bool = False) -> str:
    if failed:
        return "ERROR"
    if ratio is None:
        return "n/a"
    return "PASS" if ratio <= target else "FAIL"


def growth_of(per_fact: dict[int, float]) -> tuple[float, float]:
    """(rise, spread) of seconds per fact by number of facts: the rise is the largest ratio of a larger memory's
    time per fact to a smaller one's, the spread the largest to the smallest whatever their sizes.

    The rise is what the growth target judges: whether a fact costs more as the memory grows. The spread also
    counts a small memory's fixed costs (an interpreter, a repository, a dozen git processes: about half of a
    5k import), which make its time per fact larger without anything growing; the references show it too.
    """
    sizes = sorted(per_fact)
    rise = max(per_fact[b] / per_fact[a] for i, a in enumerate(sizes) for b in sizes[i + 1 :])
    return rise, max(per_fact.values()) / min(per_fact.values())


def rows_for(results: list[ScaleResult]) -> list[Row]:
    rows: list[Row] = []
    for res in results:
        scale = f"{res.facts // 1000}k"
        failed = bool(res.failures)
        pairs = (
            ("first import", "vaultsync first import", "floor first import", "floor", "first_import"),
            ("no-change pass", "vaultsync no-change", "git status", "git status", "no_change"),
            ("small-change pass", "vaultsync small change", "vaultsync no-change", "no-change pass", "small_change"),
            ("no-change, standing warning", "vaultsync standing", "git status standing", "git status", "no_change"),
        )
        judged = res.facts == TARGET_SCALE
        for title, mine, ref, ref_name, target_key in pairs:
            m, f = res.median(mine), res.median(ref)
            ratio = m / f if m is not None and f else None
            n = len(res.runs.get(mine, []))
            target = f"<= {TARGETS[target_key]}x"
            rows.append(
                Row(
                    scale,
                    f"{title} (median of {n})",
                    _fmt(m),
                    f"{ref_name} {_fmt(f)}",
                    ratio,
                    target if judged else f"({target} is at 50k)",
                    _verdict(ratio, TARGETS[target_key], failed and m is None) if judged else "info",
                )
            )
        informative = (
            ("new-entity pass", "vaultsync new entity", "vaultsync no-change", "no-change pass"),
            ("archive pass", "vaultsync archive", "vaultsync no-change", "no-change pass"),
            ("full pass, no snapshot", "vaultsync full", "floor first import", "floor"),
        )
        for title, mine, ref, ref_name in informative:
            m, f = res.median(mine), res.median(ref)
            if m is not None:
                shown = f"{ref_name} {_fmt(f)}"
                ratio = m / f if f else None
                n = len(res.runs[mine])
                rows.append(Row(scale, f"{title} (median of {n})", _fmt(m), shown, ratio, "(no target)", "info"))
        peak = res.peak_rss_mb()
        binding = res.facts == PEAK_RSS_SCALE
        rows.append(
            Row(
                scale,
                "peak RSS of vaultsync (with git children)",
                "n/a" if peak is None else f"{peak:.0f} MB",
                "",
                None,
                f"< {PEAK_RSS_TARGET_MB:.0f} MB at 200k" if binding else "(target is at 200k)",
                ("PASS" if peak < PEAK_RSS_TARGET_MB else "FAIL") if binding and peak is not None else "info",
            )
        )
    # The references' own growth, for reading vaultsync's: each scale runs minutes after the last, and a shared
    # machine's speed moves in between, which shows as "growth" of work that cannot grow.
    growth = (
        ("first import", "vaultsync first import", True),
        ("no-change pass", "vaultsync no-change", True),
        ("floor (reference)", "floor first import", False),
        ("git status (reference)", "git status", False),
    )
    for title, key, judged in growth:
        per_fact = {res.facts: res.median(key) / res.facts for res in results if res.median(key) is not None}
        target = f"<= {TARGETS['growth']}x" if judged else "(the machine)"
        if len(per_fact) >= 2:
            rise, spread = growth_of(per_fact)
            shown = ", ".join(f"{f // 1000}k {v * 1e6:.0f} us" for f, v in sorted(per_fact.items()))
            reference = f"larger / smaller (max / min {spread:.2f}x)"
            verdict = _verdict(rise, TARGETS["growth"]) if judged else "info"
            rows.append(Row("all", f"growth: {title} time per fact", shown, reference, rise, target, verdict))
        else:
            rows.append(Row("all", f"growth: {title} time per fact", "n/a", "needs 2+ scales", None, target, "n/a"))
    return rows


def print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="vaultsync benchmarks (ratios are measured in this run; absolute seconds are not portable)")
    for column in ("scale", "benchmark", "vaultsync", "reference", "ratio", "target", "result"):
        table.add_column(column, justify="right" if column in ("ratio",) else "left")
    colours = {"PASS": "green", "FAIL": "red", "ERROR": "bold red"}
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        verdict = f"[{colours[row.verdict]}]{row.verdict}[/]" if row.verdict in colours else row.verdict
        table.add_row(row.scale, row.benchmark, row.measured, row.reference, ratio, row.target, verdict)
    Console(width=160).print(table)


def machine() -> dict[str, str]:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "vaultsync"], capture_output=True)
    # The interpreter that runs vaultsync and the floor, which may not be the one running this script.
    version = subprocess.run(
        [str(PYTHON), "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
    ).stdout.strip()
    mem_kb = next(
        (
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    return {
        "nproc": str(os.cpu_count()),
        "python": f"{version or platform.python_version()} ({portable(str(PYTHON))})",
        "git": git,
        "os": platform.platform(),
        "memory": f"{mem_kb // 1024} MB",
        "vaultsync": (head.stdout.strip() or "unknown") + (" with uncommitted changes" if dirty.stdout else ""),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": datetime.now().strftime("%Y-%m-%d %H:%M"),
    }


DOC_BEGIN = "<!-- from here to the end marker, benchmarks/run.py --write-docs writes; edit the text around it -->"
DOC_END = "<!-- end of the part benchmarks/run.py writes -->"


def portable(arg: str) -> str:
    """An argument or path as the doc shows it: inside the repository, relative to it (``.venv/bin/python``);
    elsewhere, by its name alone. The doc is read on other machines, where one machine's folders mean nothing.
    """
    option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if not value.startswith("/"):
        return arg
    path = Path(value)
    shown = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return f"{option}{eq}{shown}"


def splice(old: str | None, generated: str) -> str:
    """The doc with the part between the markers replaced by ``generated``; the text around it is kept as is.

    A doc without the markers keeps all its text and gets the generated part at its end, so no explanation a
    person wrote is ever lost to a rewrite; move the block where it belongs once.
    """
    body = generated.strip("\n")
    block = f"{DOC_BEGIN}\n{body}\n{DOC_END}"
    if old is None:
        return f"# Performance\n\n{block}\n"
    head, begin, rest = old.partition(DOC_BEGIN)
    if begin and DOC_END in rest:
        return head + block + rest.split(DOC_END, 1)[1]
    return old.rstrip("\n") + "\n\n" + block + "\n"


def generated_docs(
    rows: list[Row],
    results: list[ScaleResult],
    skipped: list[str],
    info: dict[str, str],
    cold: str,
    command: str,
    elapsed: float,
) -> str:
    """The latest run, as docs/performance.md shows it: the verdicts, the trees, the machine and the command.

    Each repeat's seconds, peak memory and exit code go to the ``--json`` file, and ``--profile``'s profile to
    the terminal, rather than the doc: the doc explains, and the ratios of medians are what a reader compares
    with the targets.
    """
    lines = [
        "## Latest results",
        "",
        f"Measured on {info['date']} by the command at the end of this part; each ratio is of medians taken in",
        "that one run (see [How it is measured](#how-it-is-measured)).",
        "",
        "| scale | benchmark | vaultsync | reference | ratio | target | result |",
        "| --- | --- | --- | --- | ---: | --- | --- |",
    ]
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        lines.append(
            f"| {row.scale} | {row.benchmark} | {row.measured} | {row.reference} | {ratio} | {row.target} | "
            f"**{row.verdict}** |"
        )
    if skipped:
        lines += ["", "Not measured in this run: " + "; ".join(skipped) + "."]
    lines += ["", "### Trees", ""]
    lines += ["| facts | entities | superseded | id-less | Chinese | wrapped files | daily notes |"]
    lines += ["| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for res in results:
        s = res.stats
        lines.append(
            f"| {s.get('facts', 0)} | {s.get('entities', 0)} | {s.get('superseded', 0)} | {s.get('idless', 0)} | "
            f"{s.get('chinese', 0)} | {s.get('wrapped', 0)} | {s.get('daily_notes', 0)} |"
        )
    problems = [f"{res.facts // 1000}k: {f}" for res in results for f in res.failures]
    scales_of: dict[str, list[str]] = {}
    for res in results:
        for note in res.notes:
            scales_of.setdefault(note, []).append(f"{res.facts // 1000}k")
    notes = [f"{', '.join(scales)}: {note}" for note, scales in scales_of.items()]
    if problems:
        lines += ["", "### Failures", ""] + [f"- {p}" for p in problems]
    if notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in notes]
    lines += [
        "",
        "### Machine",
        "",
        f"- vaultsync: commit {info['vaultsync']}",
        f"- nproc: {info['nproc']}; memory: {info['memory']}; OS: {info['os']}",
        f"- Python: {info['python']}; {info['git']}",
        f"- load average at the start: {info['load']}",
        f"- page cache: {cold}",
        f"- total run time: {elapsed / 60:.1f} min",
        "",
        "```sh",
        command,
        "```",
    ]
    return "\n".join(lines)


def write_docs(path: Path, generated: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(splice(old, generated), encoding="utf-8")
