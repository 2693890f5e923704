"""The command line's table of commands and options: the one argparse parser that ``--help``, shell completion and
docs/cli.md are all read from.

It is its own module because it is what a person sees of the command line, apart from how ``cli.py`` runs a
command; the commands are added in the order ``--help`` lists them, and a command whose handling lives in its own
face module (janitor/review/extract, completion, obsidian, openclaw) adds its sub-parser from there.
"""

from __future__ import annotations

import argparse
from typing import Any

from vaultsync import __version__
from vaultsync.cli import completion as cli_completion
from vaultsync.cli import curation as cli_curation
from vaultsync.cli import doctor as cli_doctor
from vaultsync.cli import help as cli_help
from vaultsync.cli import obsidian as cli_obsidian
from vaultsync.cli import openclaw as cli_openclaw
from vaultsync.cli import service as cli_service
from vaultsync.cli.args import PORT, Parser, count, interval

CONFIG_HELP = "config file (default: $VAULTSYNC_CONFIG, else $XDG_CONFIG_HOME/vaultsync/config.toml)"


def build() -> argparse.ArgumentParser:
    """The parser of every command; ``--config`` is taken before the command or after it."""
    parser = Parser(
        prog="vaultsync",
        description="Keep an agent's file memory and an Obsidian vault in step, both ways, with every change in git.",
    )
    parser.add_argument("--version", action="version", version=f"vaultsync {__version__}")
    parser.add_argument("--config", help=CONFIG_HELP)
    common = Parser(add_help=False)
    common.add_argument("--config", help=CONFIG_HELP, default=argparse.SUPPRESS)  # before the command or after it
    sub = parser.add_subparsers(dest="command")  # none: the help, as `vaultsync help` prints it
    _init_command(sub, common)
    _pass_commands(sub, common)
    _schedule_command(sub, common)
    cli_service.add_command(sub, common)
    cli_doctor.add_command(sub, common)
    cli_curation.add_commands(sub, common)
    cli_completion.add_command(sub, parser)
    cli_obsidian.add_command(sub, common)
    cli_openclaw.add_command(sub, common)
    _watch_command(sub, common)
    _lookup_commands(sub, common)
    _server_commands(sub, common)
    cli_help.add_command(sub, parser)
    cli_help.add_examples(parser)
    return parser


def _init_command(sub: Any, common: argparse.ArgumentParser) -> None:
    init = sub.add_parser("init", parents=[common], help="write the config and prepare the vault")
    init.add_argument(
        "--workspace", help="the agent's workspace (holds MEMORY.md and memory/; default: found in OpenClaw's config)"
    )
    init.add_argument("--life", help="the knowledge graph root (default: the workspace's life/; made if missing)")
    init.add_argument("--vault", help="the Obsidian vault (default: the one Obsidian lists; created if missing)")
    init.add_argument("--agent", metavar="ID", help="the OpenClaw agent whose workspace to sync, when it has several")
    init.add_argument("--openclaw-profile", metavar="NAME", help="the OpenClaw profile, as `openclaw --profile NAME`")
    init.add_argument(
        "--yes", action="store_true", help="never ask: OpenClaw's default agent; several vaults need --vault"
    )
    meet = init.add_mutually_exclusive_group()
    meet.add_argument("--remote", metavar="URL", help="a git remote the vault pushes to and pulls from")
    meet.add_argument("--clone", metavar="URL", help="start the vault as a clone of this git repository")


def _pass_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sync`` and ``status``: the pass itself, and what it would do."""
    sync = sub.add_parser("sync", parents=[common], help="run one sync pass, both ways")
    sync.add_argument("--dry-run", action="store_true", help="print the plan and write nothing")
    sync.add_argument("--json", action="store_true", help="print a machine-readable report")
    sync.add_argument("--yes", action="store_true", help="confirm a pass a missing folder or an empty side stopped")
    sync.add_argument(
        "--batch",
        type=count(0),
        metavar="N",
        help="entities a first import or a full pass over a large memory reads and writes at a time (0: all at once)",
    )
    sync.add_argument(
        "--scheduled", action="store_true", help="what the schedule runs: output goes to the rotated log, not stdout"
    )
    sync.add_argument(
        "--quiet", action="store_true", help="print only problems and conflicts, each line with a timestamp (for cron)"
    )

    status = sub.add_parser("status", parents=[common], help="show open conflicts and what a pass would do")
    status.add_argument("--json", action="store_true", help="print a machine-readable report")

    accept = sub.add_parser("accept", parents=[common], help="carry a change the shrink guard held, as the person")
    accept.add_argument("targets", nargs="+", metavar="PATH", help="a held note or folder as status names it, or all")
    accept.add_argument("--json", action="store_true", help="print the pass's report as JSON")
    restore = sub.add_parser("restore", parents=[common], help="put a note's last good version back on both sides")
    restore.add_argument("path", help="a vault note or folder (an entity's, the daily notes')")
    restore.add_argument("--at", metavar="COMMIT", help="restore it as this commit holds it (default: the newest one)")
    restore.add_argument("--json", action="store_true", help="print the pass's report as JSON")


def _schedule_command(sub: Any, common: argparse.ArgumentParser) -> None:
    schedule = sub.add_parser("schedule", help="install, remove or show the entries that run sync by itself")
    actions = schedule.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", parents=[common], help="add this config's entries to the crontab")
    install.add_argument(
        "--every", type=interval, default="1h", help="how often a pass runs: 5m, 15m, 30m, 1h (default), 2h, 1d ..."
    )
    install.add_argument("--systemd", action="store_true", help="write a systemd user service and timer instead")
    actions.add_parser("remove", parents=[common], help="take out this config's entries, crontab and systemd")
    status = actions.add_parser(
        "status", parents=[common], help="show this config's entries, the next run and the last"
    )
    status.add_argument("--json", action="store_true", help="print one JSON document")


def _watch_command(sub: Any, common: argparse.ArgumentParser) -> None:
    watch = sub.add_parser("watch", parents=[common], help="run a pass shortly after files change, until stopped")
    watch.add_argument("--json", action="store_true", help="print each pass's report as one line of JSON")


def _lookup_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """``recall`` and ``log``: reading the memory and its history."""
    recall = sub.add_parser("recall", parents=[common], help="search the whole memory, current facts first")
    recall.add_argument("query", nargs="?", help="plain words; no search syntax is needed or understood")
    recall.add_argument("--limit", type=count(1), default=10, metavar="N", help="at most N hits (default 10)")
    recall.add_argument("--kind", help="comma-separated kinds to search: fact,summary,memory,daily (default: all)")
    recall.add_argument("--entity", metavar="PATH", help="only this entity and those below it (e.g. people/sarah)")
    recall.add_argument("--status", choices=("active", "all"), default="all", help="active: leave out superseded")
    recall.add_argument("--since", metavar="DATE", help="only pieces dated on or after DATE (YYYY-MM-DD)")
    recall.add_argument("--until", metavar="DATE", help="only pieces dated on or before DATE (YYYY-MM-DD)")
    recall.add_argument("--no-recency", action="store_true", help="rank by relevance alone, not newer first")
    recall.add_argument(
        "--embed", action="store_true", help="no query: embed the texts without a vector ([recall.embeddings])"
    )
    recall.add_argument("--json", action="store_true", help="print the hits as JSON")
    recall.add_argument("--explain", action="store_true", help="show each hit's bm25 score and the boosts it got")

    log = sub.add_parser("log", parents=[common], help="who changed an entity, fact or note, when, and what")
    log.add_argument("target", nargs="?", help="an entity (sarah-chen, people/sarah-chen), a fact id, or a path")
    log.add_argument("--since", metavar="WHEN", help="only changes since WHEN (a date, or git's '2 weeks ago')")
    log.add_argument("--limit", type=count(1), default=50, metavar="N", help="at most N changes (default 50)")
    log.add_argument("--json", action="store_true", help="print the changes as JSON")


def _server_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """``serve`` and ``mcp``: the faces for other programs, run until stopped."""
    serve = sub.add_parser("serve", parents=[common], help="serve the local HTTP API for plugins, until stopped")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=PORT, default=8765, help="port to bind (default 8765)")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow --host to be an address other machines can reach"
    )
    sub.add_parser("mcp", parents=[common], help="serve the MCP tools on standard input and output, until stopped")
