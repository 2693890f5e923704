"""The command line of the commands that curate memory: ``janitor`` archives what expired, ``review`` checks the
facts and writes the weekly note, ``extract`` proposes facts from the daily notes into the inbox. Parsing, printing
and exit codes over their ``app/`` use cases, kept apart from ``cli.py``: a plain ``vaultsync sync`` loads none of
those use cases."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from typing import Any

from vaultsync.cli.failure import fail
from vaultsync.config import Config
from vaultsync.model import ExitCode, Problem, Report

SCHEDULED = "what the schedule runs: output goes to the rotated log, not stdout"


def add_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """The health commands' sub-parsers, added to the main parser's."""
    janitor = sub.add_parser("janitor", parents=[common], help="archive expired MEMORY.md sections and old daily notes")
    janitor.add_argument("--dry-run", action="store_true", help="name what would be archived and write nothing")
    janitor.add_argument("--json", action="store_true", help="print one JSON document")
    janitor.add_argument("--today", type=_day, metavar="YYYY-MM-DD", help="the day to judge ages from (default: today)")
    janitor.add_argument("--scheduled", action="store_true", help=SCHEDULED)

    review = sub.add_parser("review", parents=[common], help="check the facts, write the weekly review note")
    review.add_argument("--json", action="store_true", help="print one JSON document")
    review.add_argument("--today", type=_day, metavar="YYYY-MM-DD", help="the day to review on (default: today)")
    review.add_argument("--fix", action="store_true", help="apply the fixes ticked in the review notes")
    review.add_argument("--regenerate", metavar="ENTITY", help="rewrite this entity's generated summary section")
    review.add_argument("--all", action="store_true", help="with --regenerate's job: every entity's summary")
    review.add_argument("--dry-run", action="store_true", help="say what would be written (a diff for a summary)")
    review.add_argument("--scheduled", action="store_true", help=SCHEDULED)

    extract = sub.add_parser("extract", parents=[common], help="propose facts from new daily-note text (the inbox)")
    extract.add_argument("--dry-run", action="store_true", help="show what would be proposed and write nothing")
    extract.add_argument("--json", action="store_true", help="print one JSON document")


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None


def health_command(cfg: Config, args: argparse.Namespace) -> int:
    from vaultsync.api import LockHeld

    try:
        if args.command == "janitor":
            return _janitor(cfg, args)
        if args.command == "review":
            return _review(cfg, args)
        if args.command == "extract":
            return _extract(cfg, args)
    except LockHeld:
        return fail(args.json, "busy", "another pass is running (lock held)", "try again when it ends", ExitCode.LOCKED)
    raise ValueError(f"not a health command: {args.command}")


def _janitor(cfg: Config, args: argparse.Namespace) -> int:
    from vaultsync.api import janitor

    result = janitor(cfg, dry_run=args.dry_run, today=args.today)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        print()
        return int(result.exit_code)
    verb = "would archive" if args.dry_run else "archived"
    for s in result.sections:
        print(
            f"{verb}: MEMORY.md lines {s.lines[0]}-{s.lines[1]} [P{s.priority}] {s.tagged_on} {s.title} -> {s.archive}"
        )
    for old, new in result.daily:
        print(f"{verb}: {old} -> {new}")
    if not (result.sections or result.daily):
        print("nothing to archive")
    return _problems_and_pass(result.problems, result.sync, result.exit_code)


def _review(cfg: Config, args: argparse.Namespace) -> int:
    from vaultsync.api import regenerate_summaries, review, review_fix

    if args.regenerate or args.all:
        result = regenerate_summaries(cfg, None if args.all else [args.regenerate], args.today, args.dry_run)
    elif args.fix:
        result = review_fix(cfg, args.today, args.dry_run)
    else:
        result = review(cfg, args.today, args.dry_run)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        print()
        return int(result.exit_code)
    for finding in result.findings:
        print(f"{finding.kind}: {finding.entity}: {finding.message}")
    for line in result.applied:
        print(f"applied: {line}")
    for diff in result.diffs:
        print(diff, end="")
    for line in result.planned:
        print(f"would {line}")
    for problem in result.problems:
        print(f"{problem.severity}: {problem.line()}")
    if result.dry_run:
        if not (result.planned or result.diffs):
            print("dry run: nothing would be written")
    elif result.findings and result.note:
        print(f"review note: {result.note} (tick the fixes you want, then `vaultsync review --fix`)")
    elif not (result.applied or result.diffs or result.problems):
        print("nothing to review" if not (args.fix or args.regenerate or args.all) else "nothing to do")
    return int(result.exit_code)


def _extract(cfg: Config, args: argparse.Namespace) -> int:
    from vaultsync.api import extract

    result = extract(cfg, dry_run=args.dry_run)
    if not result.configured:
        where = f"no [extract] command in {cfg.source}"
        return fail(args.json, "config", where, "set one to run extract", result.exit_code)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        print()
        return int(result.exit_code)
    if result.rejected:
        print(f"vaultsync: {result.rejected}", file=sys.stderr)
    verb = "would propose" if args.dry_run else "proposed"
    for p, fid in zip(result.proposals, result.ids, strict=False):
        what = f"{p.entity} {fid}" + (" (new entity)" if p.new_entity else "")
        print(f"{verb}: {what} [{p.category or '-'}] {p.fact} <- {p.source}")
    if not result.notes:
        print("no new daily-note text")
    elif not (result.proposals or result.rejected or result.problems):
        print(f"nothing proposed from {', '.join(result.notes)}")
    return _problems_and_pass(result.problems, result.sync, result.exit_code)


def _problems_and_pass(problems: list[Problem], report: Report | None, code: int) -> int:
    """The end a health command prints the same way: its problems, then what the pass after it wrote."""
    for problem in problems:
        print(f"{problem.severity}: {problem.line()}")
    if report is not None:
        commits = " ".join(sha[:10] for sha in report.commits)
        print(f"sync: wrote {report.files_written} file(s)" + (f", commit(s): {commits}" if commits else ""))
        if report.stopped:
            print(f"sync stopped: {report.stopped}")
    return int(code)
