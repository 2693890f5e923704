"""``vaultsync openclaw install``: the command line over ``app/openclaw.py``, kept apart from ``cli.py``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vaultsync.api import ConfigError, ScheduleError
from vaultsync.config import Config
from vaultsync.model import ExitCode


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``openclaw`` sub-parser, added to the main parser's."""
    openclaw = sub.add_parser("openclaw", help="set up the OpenClaw plugin that recalls and captures memory")
    actions = openclaw.add_subparsers(dest="action", required=True)
    install = actions.add_parser(
        "install", parents=[common], help="install the packaged plugin into OpenClaw and write its settings"
    )
    install.add_argument(
        "--mode",
        choices=("supplement", "slot"),
        default="supplement",
        help="supplement: beside OpenClaw's memory-core (default); slot: instead of it, memory-core disabled",
    )
    install.add_argument("--url", help="the API's address the plugin calls (default http://127.0.0.1:8765)")
    install.add_argument("--json", action="store_true", help="print one JSON document")


def openclaw_command(cfg: Config, args: argparse.Namespace, path: Path) -> int:
    from vaultsync.api import OBSIDIAN_URL, OpenClawRefused, install_openclaw_plugin

    try:
        done = install_openclaw_plugin(cfg, mode=args.mode, url=args.url or OBSIDIAN_URL)
    except (ConfigError, OpenClawRefused) as exc:
        print(f"vaultsync: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.json:
        print(json.dumps(done.to_json(), indent=2))
        return ExitCode.CLEAN
    if not done.ran:
        print(f"the plugin's files are in {done.folder}; openclaw is not on PATH, so run these where it is:")
        for line in done.lines():
            print(f"  {line}")
        return ExitCode.CLEAN
    print(f"installed the OpenClaw plugin vaultsync-memory from {done.folder}, in {done.mode} mode")
    print(f"it calls {done.base_url} with the token in {done.token_file}")
    print(f"next: {_serve_hint(path)}; OpenClaw loads the plugin at its next start (restart its gateway if it runs)")
    return ExitCode.CLEAN


def _serve_hint(path: Path) -> str:
    """The plugin needs ``vaultsync serve``: say so, unless the service already keeps it running (the quickstart
    installs the service first, and being told to install it again would send the person back a step)."""
    from vaultsync.api import absolute_config, service_status

    try:
        up = service_status(absolute_config(path)).up
    except ScheduleError:
        up = False
    if up:
        return "the service keeps `vaultsync serve` running"
    return "keep `vaultsync serve` running (vaultsync service install)"
