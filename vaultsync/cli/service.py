"""``vaultsync service install|status|remove|run``: the command line over ``app/service.py``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from vaultsync.api import ConfigError, ScheduleError, ServiceOutcome, ServiceStatus, absolute_config
from vaultsync.cli.args import PORT, interval
from vaultsync.cli.failure import asked_json, fail_on
from vaultsync.model import ExitCode

MANAGERS = ("systemd", "launchd", "cron", "manual")


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    service = sub.add_parser("service", help="keep `vaultsync serve` running: install, show or remove the service")
    actions = service.add_subparsers(dest="action", required=True)
    install = actions.add_parser(
        "install", parents=[common], help="start serve now and at every login or boot, restarted when it fails"
    )
    install.add_argument(
        "--watch", action="store_true", help="also watch for changes and run the hourly pass (instead of the schedule)"
    )
    install.add_argument(
        "--every", type=interval, default="1h", help="with --watch: how often the pass runs (default 1h)"
    )
    install.add_argument("--port", type=PORT, default=8765, help="the port serve listens on (default 8765)")
    install.add_argument("--manager", choices=MANAGERS, help="who starts it (default: systemd, launchd or cron)")
    status = actions.add_parser("status", parents=[common], help="whether it is up, since when, and its last error")
    status.add_argument("--json", action="store_true", help="print one JSON document")
    actions.add_parser("remove", parents=[common], help="stop it and take out what install wrote")
    actions.add_parser("restart", parents=[common], help="stop and start it (after a new token or config)")
    run = actions.add_parser("run", parents=[common], help="what the service runs: serve (and watch), kept running")
    run.add_argument("--watch", action="store_true", help="also run watch, and a pass every --every")
    run.add_argument("--every", type=interval, default="1h", help="with --watch: how often the pass runs (default 1h)")
    run.add_argument("--port", type=PORT, default=8765, help="the port serve listens on (default 8765)")


def service_command(path: Path, args: argparse.Namespace) -> int:
    from vaultsync.api import install_service, remove_service, restart_service, run_service, service_status

    try:
        config = absolute_config(path)
        if args.action == "install":
            return _print_outcome(install_service(config, args.watch, args.every, args.manager, args.port), config)
        if args.action == "remove":
            return _print_outcome(remove_service(config), config)
        if args.action == "restart":
            return _print_outcome(restart_service(config), config)
        if args.action == "run":
            what = "serve, watch and the pass every " + args.every if args.watch else "serve"

            def started(log: Path) -> None:
                print(
                    f"vaultsync: running {what} for {config}, kept running; log: {log}; Ctrl-C stops", file=sys.stderr
                )

            return run_service(config, args.watch, args.every, args.port, started)
        return _print_status(service_status(config), args.json)
    except (ConfigError, ScheduleError) as exc:
        return fail_on(asked_json(args), exc)


def _print_outcome(outcome: ServiceOutcome, config: Path) -> int:
    if outcome.unchanged and not outcome.then:
        print(f"nothing to change for {config}" if outcome.manager else f"no service installed for {config}")
    for changed in outcome.changed:
        print(f"wrote: {changed}" if Path(changed).exists() or changed == "crontab" else f"removed: {changed}")
    if outcome.command:
        print(f"  runs: {outcome.command}")
    if outcome.started:
        print(f"started ({outcome.manager})" + (f"; serve answers at {outcome.answering}" if outcome.answering else ""))
    if outcome.then:
        print("to finish, run:")
        for command in outcome.then:
            print(f"  {command}")
    for note in outcome.notes:
        print(f"note: {note}")
    if outcome.log:
        print(f"log: {outcome.log}")
    return ExitCode.CLEAN


def _print_status(found: ServiceStatus, as_json: bool) -> int:
    if as_json:
        value = asdict(found)
        value["log"] = str(found.log) if found.log else None
        print(json.dumps(value, indent=2))
        return ExitCode.CLEAN
    if not found.installed:
        print("installed: no (vaultsync service install)")
    for unit in found.installed:
        watching = " (with watch and the hourly pass)" if unit.mode == "watch" else ""
        print(f"installed: {unit.manager}, {unit.where}{watching}")
    print(f"up: yes, since {found.since} (pid {found.pid})" if found.up else "up: no")
    for name, child in found.children.items():
        if child.restarts:
            print(f"  {name}: restarted {child.restarts} time(s)")
    if found.manager_says:
        print(f"  {found.manager_says}")
    print(f"last error: {found.last_error} (at {found.last_error_at})" if found.last_error else "last error: none")
    print(f"log: {found.log}")
    return ExitCode.CLEAN
