"""The command-line face of recall and history: ``vaultsync recall`` and ``vaultsync log`` print what the
app's recall and history use cases find: a table on a terminal, one tab-separated line per hit or change into
a pipe (for ``grep``, ``cut`` and ``awk``; a table's folded cells would break a path mid-word), or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from vaultsync import config as configmod
from vaultsync.cli.failure import fail_on
from vaultsync.model import ExitCode

if TYPE_CHECKING:
    from vaultsync.api import HistoryChange


def recall_command(args: argparse.Namespace, cfg: configmod.Config) -> int:
    from vaultsync.api import RecallOptions, UsageError, parse_kinds, recall

    if args.embed:
        return _embed_command(args, cfg)
    if not args.query:
        print("vaultsync: recall needs a query (or --embed)", file=sys.stderr)
        return ExitCode.USAGE
    try:
        kinds = parse_kinds(args.kind)
    except UsageError as exc:
        return fail_on(args.json, exc, lead="--kind ", fallback="e.g. --kind fact,summary")
    options = RecallOptions(
        limit=args.limit,
        kinds=kinds,
        entity=args.entity,
        active_only=args.status == "active",
        since=args.since,
        until=args.until,
        recency=not args.no_recency,
        explain=args.explain,
    )
    try:
        result = recall(cfg, args.query, options)
    except UsageError as exc:
        named = f"--{exc.field}: " if exc.field else ""  # the option, as the person typed it
        return fail_on(args.json, exc, lead=named, fallback="see `vaultsync recall --help`")
    if args.json:
        return _print_json(result.to_json())
    rows = []
    for hit in result.hits:
        where = hit.vault_path or f"{hit.root}/{hit.path}"
        if hit.lines:
            where += f":{hit.lines[0]}" if hit.lines[0] == hit.lines[1] else f":{hit.lines[0]}-{hit.lines[1]}"
        text = " ".join(hit.text.split())
        if hit.status == "superseded":
            text = f"(superseded{' by ' + hit.superseded_by if hit.superseded_by else ''}) {text}"
        why = (_why(hit.explain),) if args.explain else ()
        rows.append((f"{hit.score:.2f}", hit.kind, where, text[:200], *why))
    if result.semantic:
        print(f"semantic: {result.semantic}")
    if not rows:
        print("no hits")
    else:
        columns = ("score", "kind", "where", "text", *(("why",) if args.explain else ()))
        _print_rows(columns, rows, f"recall: {args.query[:60]}", whole=(2,))
    return ExitCode.CLEAN


def _embed_command(args: argparse.Namespace, cfg: configmod.Config) -> int:
    """``recall --embed``: embed the index's texts that have no vector yet; exit 1 when the endpoint failed."""
    from vaultsync.api import embed_recall

    if args.query:
        print("vaultsync: recall --embed takes no query", file=sys.stderr)
        return ExitCode.USAGE
    report = embed_recall(cfg)
    if report is None:
        print("vaultsync: the semantic re-ranker is off: no [recall.embeddings] url in the config", file=sys.stderr)
        return ExitCode.USAGE
    if args.json:
        _print_json(report.to_json())
    else:
        rate = f", {report.embedded / report.seconds:.0f} texts/s" if report.embedded and report.seconds else ""
        print(
            f"embedded {report.embedded} texts in {report.seconds:.1f} s{rate}; {report.have} of {report.texts} "
            f"have a vector ({report.pruned} old ones dropped)"
        )
        if report.error:
            print(f"vaultsync: stopped early: {report.error}", file=sys.stderr)
    return ExitCode.CLEAN if report.error is None else ExitCode.SKIPPED_INPUT  # texts left without a vector


def _why(explain: dict[str, float | str] | None) -> str:
    """``bm25 7.25 + context 1.84, entity +0.7``: the score's parts as ``docs/recall.md`` names them."""
    parts = dict(explain or {})
    cosine = parts.pop("cosine", None)
    base = f"bm25 {parts.pop('bm25', 0):.2f}"
    if "context" in parts:
        base += f" + context {parts.pop('context'):.2f}"
    shown = [base, *(f"{name} +{value}" for name, value in parts.items())]
    if cosine is not None:
        shown.append(f"cosine {cosine:.3f}" if isinstance(cosine, float) else f"cosine: {cosine}")
    return ", ".join(shown)


def log_command(args: argparse.Namespace, cfg: configmod.Config) -> int:
    from vaultsync.api import Ambiguous, HistoryError, Invalid, NotFound, history

    try:
        result = history(cfg, args.target, since=args.since, limit=args.limit)
    except HistoryError as exc:
        return fail_on(args.json, exc, lead="cannot read the vault's history: ")
    except (Invalid, NotFound, Ambiguous) as exc:
        hint = "name an entity (sarah-chen), a fact id or a path; `vaultsync log` alone lists the latest changes"
        return fail_on(args.json, exc, fallback=hint)
    if args.json:
        return _print_json(result.to_json())
    if not result.changes:
        print("no changes")
        return ExitCode.CLEAN
    rows = []
    for change in result.changes:
        note = change.paths[0] if change.paths else ""
        if len(change.paths) > 1:
            note += f" (+{len(change.paths) - 1} more)"
        rows.append((change.when.replace("T", " ")[:16], _who(change), change.what, note, change.commit[:10]))
    _print_rows(("when", "who", "what", "note", "commit"), rows, None, whole=(3,))
    return ExitCode.CLEAN


def _who(change: HistoryChange) -> str:
    """The author, with the agent and the conversation a program named: ``vaultsync api (openclaw) [main,
    session agent:main:telegram]``."""
    said = [change.agent, f"session {change.session}" if change.session else ""]
    return f"{change.who} [{', '.join(s for s in said if s)}]" if any(said) else change.who


def _print_rows(
    columns: tuple[str, ...], rows: list[tuple[str, ...]], title: str | None, whole: tuple[int, ...]
) -> None:
    """A table on a terminal wide enough for it, the ``whole`` columns (paths) never wrapped; elsewhere one line
    per row, its cells separated by tabs, so a pipe (or a narrow window) gets whole paths, one hit per line."""
    console = None
    if sys.stdout.isatty():
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=False)
    widths = [max(len(columns[n]), *(len(row[n]) for row in rows)) for n in range(len(columns))]
    kept = sum(widths[n] for n in whole) + sum(min(widths[n], 12) for n in range(len(columns)) if n not in whole)
    if console is None or kept + 3 * len(columns) > console.width:
        for row in rows:
            print("\t".join(" ".join(cell.split()) for cell in row))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, title=title)
    for n, column in enumerate(columns):
        table.add_column(column, no_wrap=n in whole, min_width=widths[n] if n in whole else min(widths[n], 12))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def _print_json(document: object) -> int:
    """``--json``: one document on standard output and nothing else, as scripts expect."""
    json.dump(document, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return ExitCode.CLEAN
