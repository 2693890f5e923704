"""The command line of ``vaultsync schedule`` and the run lines of ``vaultsync status``: printing and exit codes
over ``vaultsync.app.schedule``, kept apart from ``cli.py`` so a plain ``vaultsync sync`` never loads them."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

from vaultsync import config as configmod
from vaultsync.api import (
    ConfigError,
    ScheduleError,
    ScheduleStatus,
    absolute_config,
    install_schedule,
    remove_schedule,
    schedule_status,
)
from vaultsync.cli.failure import asked_json, fail, fail_on
from vaultsync.config import Config
from vaultsync.model import ExitCode


def schedule_command(action: str, path: Path, args: argparse.Namespace) -> int:
    """``schedule install|remove|status``; a crontab that cannot be read or written is exit 2, nothing changed."""
    try:
        config = absolute_config(path)
        cfg = configmod.load(config) if action != "remove" else None
        if action == "install":
            return _install(config, args.every, args.systemd)
        if action == "remove":
            return _remove(config)
        return _status(config, cfg, asked_json(args))
    except (ConfigError, ScheduleError) as exc:
        return fail_on(asked_json(args), exc)


def _install(config: Path, every: str, systemd: bool) -> int:
    outcome = install_schedule(config, every, systemd)
    where = "systemd user units" if systemd else "crontab"
    if outcome.unchanged:
        print(f"already installed in the {where} for {config}; nothing changed")
    else:
        for changed in outcome.changed:
            print(f"wrote: {changed}")
    for line in outcome.lines:
        print(f"  {line}")
    for note in outcome.notes:
        print(f"note: {note}")
    print(f"log: {outcome.log}")
    if outcome.then:
        print("to enable it, run:")
        for command in outcome.then:
            print(f"  {command}")
    return ExitCode.CLEAN


def _remove(config: Path) -> int:
    outcome = remove_schedule(config)
    if outcome.unchanged:
        print(f"nothing scheduled for {config}; nothing changed")
    for changed in outcome.changed:
        print(f"removed from: {changed}" if changed == "crontab" else f"removed: {changed}")
    if outcome.then:
        print("then run:")
        for command in outcome.then:
            print(f"  {command}")
    return ExitCode.CLEAN


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def _status(config: Path, cfg: Config | None, as_json: bool) -> int:
    found = schedule_status(config, cfg)
    if found.crontab_problem and not found.entries:
        return fail(as_json, "schedule", found.crontab_problem)
    if as_json:
        if found.crontab_problem:
            print(f"vaultsync: {found.crontab_problem}", file=sys.stderr)
        print(json.dumps(found.to_json(), indent=2, ensure_ascii=False))
        return ExitCode.CLEAN
    if not found.entries:
        print(f"nothing scheduled for {config}")
    for entry in found.entries:
        print(f"entry: {entry}")
    if found.next_run:
        print(f"next run: {_when(found.next_run)}")
    _print_last(found)
    print(f"log: {found.log}")
    if found.crontab_problem:
        print(f"vaultsync: {found.crontab_problem}", file=sys.stderr)
    return ExitCode.CLEAN


def _print_last(found: ScheduleStatus) -> None:
    print(f"last run: {found.last.line()}" if found.last else "last run: none recorded")
    if found.stale:
        since = f"at {found.last_ok.at}" if found.last_ok else "never"
        print(
            f"warning: the last pass that ran to its end was {since}, more than twice the schedule's interval "
            f"({found.every}) ago; check the log and `crontab -l` (docs/cli.md: Running it by itself)"
        )


def print_runs(path: Path, cfg: Config) -> None:
    """``status``'s first lines: the last run and, when a schedule is installed, the next one."""
    found = schedule_status(absolute_config(path), cfg)
    if found.next_run:
        print(f"next run: {_when(found.next_run)} (scheduled)")
    _print_last(found)
