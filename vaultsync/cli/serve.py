"""``vaultsync serve`` and ``vaultsync mcp``: start a server face, kept apart from ``cli.py`` so that a plain
``vaultsync sync`` never imports FastAPI, uvicorn or the MCP SDK."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import signal
import sys

from vaultsync.api import ConfigError, load_token
from vaultsync.cli.failure import fail, fail_on
from vaultsync.config import Config
from vaultsync.model import ExitCode


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_command(cfg: Config, args: argparse.Namespace) -> int:
    if args.command == "mcp":
        from vaultsync.server.mcp import run

        run(cfg)
        return ExitCode.CLEAN
    if not _loopback(args.host):
        if not args.allow_remote:
            reach = f"--host {args.host} is reachable from other machines"
            return fail(False, "usage", reach, "add --allow-remote if you mean it")
        print(
            f"vaultsync: warning: serving on {args.host}: anyone who can reach it and holds the token can read and "
            "change the memory; the token travels in clear text without TLS",
            file=sys.stderr,
        )
    try:
        token = load_token(cfg)
    except ConfigError as exc:
        return fail_on(False, exc)
    from vaultsync.api import PortUnavailable
    from vaultsync.server.http import serve

    # SIGTERM (systemd, a service manager, kill) is a request to stop, as Ctrl-C is: both end in exit 0.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(cfg, token, args.host, args.port)
    except PortUnavailable as exc:
        return fail_on(False, exc)
    return ExitCode.CLEAN
