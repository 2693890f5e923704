"""``vaultsync accept`` and ``vaultsync restore``: the person's two answers to a change the shrink guard held."""

from __future__ import annotations

import argparse
import sys

from vaultsync import config as configmod
from vaultsync.cli.report import print_report
from vaultsync.model import ExitCode


def held_command(cfg: configmod.Config, args: argparse.Namespace) -> int:
    """Run ``accept`` or ``restore``, then print the pass's report as ``sync`` does; its exit code is the pass's."""
    from vaultsync.api import HistoryError, LockHeld, NotFound, accept, restore

    try:
        report = accept(cfg, args.targets) if args.command == "accept" else restore(cfg, args.path, args.at)
    except LockHeld:
        print("vaultsync: another pass is running (lock held); try again when it ends", file=sys.stderr)
        return ExitCode.LOCKED
    except (NotFound, HistoryError) as exc:
        print(f"vaultsync: {exc.line()}", file=sys.stderr)
        return ExitCode.USAGE
    if args.json:
        report.write_json(sys.stdout)
    else:
        print_report(report, terminal=sys.stdout.isatty())
    return int(report.exit_code)
