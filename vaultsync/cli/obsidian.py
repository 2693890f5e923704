"""``vaultsync obsidian install``: the command line over ``app/obsidian.py``, kept apart from ``cli.py``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from vaultsync.api import ConfigError
from vaultsync.cli.failure import fail, fail_on
from vaultsync.config import Config
from vaultsync.model import ExitCode


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``obsidian`` sub-parser, added to the main parser's."""
    obsidian = sub.add_parser("obsidian", help="set up the vault plugin that shows the sync in Obsidian")
    actions = obsidian.add_subparsers(dest="action", required=True)
    install = actions.add_parser(
        "install", parents=[common], help="copy the plugin into the vault and write its address and token"
    )
    install.add_argument("--url", help="the API's address the plugin calls (default http://127.0.0.1:8765)")
    install.add_argument(
        "--config-dir", default=".obsidian", metavar="NAME", help="the vault's settings folder (default .obsidian)"
    )
    install.add_argument("--from", dest="source", metavar="DIR", help="a folder holding a built main.js and manifest")
    install.add_argument("--json", action="store_true", help="print one JSON document")


def obsidian_command(cfg: Config, args: argparse.Namespace) -> int:
    from vaultsync.api import OBSIDIAN_URL, LockHeld, install_obsidian_plugin, load_token

    try:
        token = load_token(cfg)
        done = install_obsidian_plugin(
            cfg,
            token,
            url=args.url or OBSIDIAN_URL,
            config_dir=args.config_dir,
            source=Path(args.source).expanduser() if args.source else None,
        )
    except ConfigError as exc:
        return fail_on(args.json, exc)
    except LockHeld:
        hint = "nothing installed, try again when it ends"
        return fail(args.json, "busy", "a pass is running (lock held)", hint, ExitCode.LOCKED)
    if args.json:
        print(json.dumps(done.to_json(), indent=2))
        return ExitCode.CLEAN
    print(f"installed the plugin {done.version} in {done.folder}")
    if done.ignored:
        print(f"{done.folder}/ is now in the vault's .gitignore (its data.json holds the API token)")
    print("next: run `vaultsync serve`, then enable the plugin in Settings -> Community plugins")
    return ExitCode.CLEAN
