"""The command-line face of recall and history: ``vaultsync recall`` and ``vaultsync log`` print what the
app's recall and history use cases find, as a short table or as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from vaultsync import config as configmod
from vaultsync.model import ExitCode


def recall_command(args: argparse.Namespace, cfg: configmod.Config) -> int:
    from vaultsync.app.recall import RecallOptions, UsageError, parse_kinds, recall

    try:
        kinds = parse_kinds(args.kind)
    except UsageError as exc:
        print(f"vaultsync: --kind {exc}", file=sys.stderr)
        return ExitCode.USAGE
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
        print(f"vaultsync: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.json:
        return _print_json(result.to_json())
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, title=f"recall: {args.query[:60]}" if result.hits else None)
    for column in ("score", "kind", "where", "text", *(("why",) if args.explain else ())):
        table.add_column(column, overflow="fold")
    for hit in result.hits:
        where = hit.vault_path or f"{hit.root}/{hit.path}"
        if hit.lines:
            where += f":{hit.lines[0]}" if hit.lines[0] == hit.lines[1] else f":{hit.lines[0]}-{hit.lines[1]}"
        text = " ".join(hit.text.split())
        if hit.status == "superseded":
            text = f"(superseded{' by ' + hit.superseded_by if hit.superseded_by else ''}) {text}"
        why = (Text(_why(hit.explain)),) if args.explain else ()
        table.add_row(f"{hit.score:.2f}", hit.kind, Text(where), Text(text[:200]), *why)
    if result.hits:
        Console(highlight=False, soft_wrap=False).print(table)
    else:
        print("no hits")
    return ExitCode.CLEAN


def _why(explain: dict[str, float | str] | None) -> str:
    """``bm25 7.25 + context 1.84, entity +0.7``: the score's parts as ``docs/recall.md`` names them."""
    parts = dict(explain or {})
    base = f"bm25 {parts.pop('bm25', 0):.2f}"
    if "context" in parts:
        base += f" + context {parts.pop('context'):.2f}"
    return ", ".join([base, *(f"{name} +{value}" for name, value in parts.items())])


def log_command(args: argparse.Namespace, cfg: configmod.Config) -> int:
    from vaultsync.app.history import HistoryError, Invalid, history

    try:
        result = history(cfg, args.target, since=args.since, limit=max(1, args.limit))
    except HistoryError as exc:
        print(f"vaultsync: cannot read the vault's history: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except Invalid as exc:
        print(f"vaultsync: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.json:
        return _print_json(result.to_json())
    if not result.changes:
        print("no changes")
        return ExitCode.CLEAN
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False)
    for column in ("when", "who", "what", "note", "commit"):
        table.add_column(column, overflow="fold")
    for change in result.changes:
        note = change.paths[0] if change.paths else ""
        if len(change.paths) > 1:
            note += f" (+{len(change.paths) - 1} more)"
        when = change.when.replace("T", " ")[:16]
        table.add_row(when, Text(change.who), Text(change.what), Text(note), change.commit[:10])
    Console(highlight=False).print(table)
    return ExitCode.CLEAN


def _print_json(document: object) -> int:
    """``--json``: one document on standard output and nothing else, as scripts expect."""
    json.dump(document, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return ExitCode.CLEAN
