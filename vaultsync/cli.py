"""The command line: a thin face over the library; all printing and exit codes live here."""

from __future__ import annotations

import argparse
import io
import os
import select
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime
from pathlib import Path
from typing import Any

from vaultsync import __version__
from vaultsync import config as configmod
from vaultsync.cli_args import Parser
from vaultsync.config import ConfigError
from vaultsync.model import ExitCode, Report, phrase


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="vaultsync",
        description="Keep an agent's file memory and an Obsidian vault in step, both ways, with every change in git.",
    )
    parser.add_argument("--version", action="version", version=f"vaultsync {__version__}")
    where = "config file (default: $VAULTSYNC_CONFIG, else $XDG_CONFIG_HOME/vaultsync/config.toml)"
    parser.add_argument("--config", help=where)
    common = Parser(add_help=False)
    common.add_argument("--config", help=where, default=argparse.SUPPRESS)  # before the command or after it
    sub = parser.add_subparsers(dest="command", required=True)

    init = sub.add_parser("init", parents=[common], help="write the config and prepare the vault")
    init.add_argument("--workspace", required=True, help="the agent's workspace (holds MEMORY.md and memory/)")
    init.add_argument("--life", required=True, help="the knowledge graph root (holds projects/, areas/, ...)")
    init.add_argument("--vault", required=True, help="the Obsidian vault (created if missing)")
    meet = init.add_mutually_exclusive_group()
    meet.add_argument("--remote", metavar="URL", help="a git remote the vault pushes to and pulls from")
    meet.add_argument("--clone", metavar="URL", help="start the vault as a clone of this git repository")

    sync = sub.add_parser("sync", parents=[common], help="run one sync pass, both ways")
    sync.add_argument("--dry-run", action="store_true", help="print the plan and write nothing")
    sync.add_argument("--json", action="store_true", help="print a machine-readable report")
    sync.add_argument("--yes", action="store_true", help="confirm a pass the mass-delete guard stopped")
    sync.add_argument(
        "--batch",
        type=int,
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

    schedule = sub.add_parser("schedule", help="install, remove or show the entries that run sync by itself")
    actions = schedule.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", parents=[common], help="add this config's entries to the crontab")
    install.add_argument("--every", default="1h", help="how often a pass runs: 5m, 15m, 30m, 1h (default), 2h, 1d ...")
    install.add_argument("--systemd", action="store_true", help="write a systemd user service and timer instead")
    actions.add_parser("remove", parents=[common], help="take out this config's entries, crontab and systemd")
    actions.add_parser("status", parents=[common], help="show this config's entries, the next run and the last")

    from vaultsync import cli_completion, cli_curation, cli_obsidian

    cli_curation.add_commands(sub, common)
    cli_completion.add_command(sub, parser)
    cli_obsidian.add_command(sub, common)

    watch = sub.add_parser("watch", parents=[common], help="run a pass shortly after files change, until stopped")
    watch.add_argument("--json", action="store_true", help="print each pass's report as one line of JSON")

    recall = sub.add_parser("recall", parents=[common], help="search the whole memory, current facts first")
    recall.add_argument("query", help="plain words; no search syntax is needed or understood")
    recall.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10)")
    recall.add_argument("--kind", help="comma-separated kinds to search: fact,summary,memory,daily (default: all)")
    recall.add_argument("--entity", metavar="PATH", help="only this entity and those below it (e.g. people/sarah)")
    recall.add_argument("--status", choices=("active", "all"), default="all", help="active: leave out superseded")
    recall.add_argument("--since", metavar="DATE", help="only pieces dated on or after DATE (YYYY-MM-DD)")
    recall.add_argument("--until", metavar="DATE", help="only pieces dated on or before DATE (YYYY-MM-DD)")
    recall.add_argument("--no-recency", action="store_true", help="rank by relevance alone, not newer first")
    recall.add_argument("--json", action="store_true", help="print the hits as JSON")
    recall.add_argument("--explain", action="store_true", help="show each hit's bm25 score and the boosts it got")

    log = sub.add_parser("log", parents=[common], help="who changed an entity, fact or note, when, and what")
    log.add_argument("target", nargs="?", help="an entity (sarah-chen, people/sarah-chen), a fact id, or a path")
    log.add_argument("--since", metavar="WHEN", help="only changes since WHEN (a date, or git's '2 weeks ago')")
    log.add_argument("--limit", type=int, default=50, metavar="N", help="at most N changes (default 50)")
    log.add_argument("--json", action="store_true", help="print the changes as JSON")

    serve = sub.add_parser("serve", parents=[common], help="serve the local HTTP API for plugins, until stopped")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port to bind (default 8765)")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow --host to be an address other machines can reach"
    )
    sub.add_parser("mcp", parents=[common], help="serve the MCP tools on standard input and output, until stopped")
    return parser


TABLE_ROWS = 40
HEALTH_COMMANDS = ("janitor", "review", "extract")


def _print_report(report: Report, terminal: bool) -> None:
    """The report for a person: a rich table on a terminal, plain lines elsewhere (cron's log, a pipe).

    Plain lines are easier to grep in a log, and an hourly pass under cron does not load rich for them (some
    fifty modules: about a tenth of a small pass with a cold cache).
    """
    remote = _remote_line(report)
    if not (report.stopped or report.changes or report.actions or report.problems or report.open_conflicts):
        if remote:
            print(remote)
        print(
            f"{'would write' if report.dry_run else 'wrote'} 0 file(s)"
            + ("" if report.dry_run else ", nothing to commit")
        )
        return
    say = _styled_printer() if terminal else _plain_print
    if report.stopped:
        say("stopped:", "bold red", " ")
        say(report.stopped)
    by_scope: dict[tuple[str, str], Counter[str]] = {}
    for change in report.changes:
        by_scope.setdefault((change.side, change.scope), Counter())[change.what] += 1
    if by_scope:
        rows = [(side, scope, phrase(counts)) for (side, scope), counts in by_scope.items()]
        if not report.dry_run and len(rows) > TABLE_ROWS:
            # A first import touches thousands of scopes: a screenful says what happened, --json says all.
            rest = sum((counts for counts in list(by_scope.values())[TABLE_ROWS:]), Counter())
            rows[TABLE_ROWS:] = [("", f"... {len(rows) - TABLE_ROWS} more (--json lists all)", phrase(rest))]
        title = "dry run: would change" if report.dry_run else "changes"
        if terminal:
            _print_table(title, rows)
        else:
            print(f"{title}:")
            for side, scope, what in rows:
                print(f"  {side:<6}  {scope}: {what}" if side else f"  {scope}: {what}")
    if terminal or report.dry_run:
        lines = report.actions if report.dry_run else report.actions[:TABLE_ROWS]
        for line in lines:
            say(f"  {line}")
        if len(report.actions) > len(lines):
            say(f"  ... and {len(report.actions) - len(lines)} more")
    for line in report.attention(stop=False, notes=True):
        kind, _, text = line.partition(": ")
        say(f"{kind}:", COLOURS.get(kind, ""), " ")
        say(text)
    if remote:
        say(remote, "yellow" if report.waiting else "")
    if report.dry_run:
        ops = Counter(line.split(" ", 2)[1] for line in report.actions)
        summary = f"would write {ops['write']} file(s)"
        summary += "".join(f", {op} {ops[op]}" for op in ("delete", "move") if ops[op])
    else:
        summary = f"wrote {report.files_written} file(s)"
    if report.commits:
        summary += f", {len(report.commits)} commit(s): " + " ".join(sha[:10] for sha in report.commits)
    elif not report.dry_run and not report.stopped:
        summary += ", nothing to commit" if not report.actions else ""
    say(summary)


def _remote_line(report: Report) -> str:
    """Where the vault stands with its remote, when there is something to say: commits brought in or pushed,
    a push waiting, or (for ``status``) the counts as of the last fetch."""
    state = report.remote
    if state is None or not (report.dry_run or state.waiting_since or state.pushed or state.integrated):
        return ""
    return state.line()


Say = Callable[..., None]
COLOURS = {"error": "red", "warning": "yellow", "note": "dim", "conflict": "bold yellow", "open conflict": "yellow"}


def _plain_print(text: str, style: str = "", end: str = "\n") -> None:
    print(text, end=end)


def _styled_printer() -> Say:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)

    def say(text: str, style: str = "", end: str = "\n") -> None:
        console.print(text, style=style or None, markup=False, end=end)

    return say


def _print_table(title: str, rows: list[tuple[str, str, str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_edge=False)
    for column in ("from", "what", "changes"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console(highlight=False, soft_wrap=True).print(table)


class _ProgressBar:
    """A bar on stderr for passes that write many files (a first import); silent under cron and for small passes."""

    MIN_ACTIONS = 200

    def __init__(self) -> None:
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < self.MIN_ACTIONS:
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("writing notes", total=total)
        self.bar.update(self.task, completed=done)
        if done >= total:
            self.bar.stop()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if getattr(args, "run", None):  # a command needing no config (completion)
        return int(args.run(args))
    try:
        if getattr(args, "scheduled", False):
            return _scheduled(args)
        return _run(args)
    except KeyboardInterrupt:
        # Every write is a file moved into place and the base is saved last, so a pass stopped anywhere leaves
        # each file whole; the lock goes with the process. The next pass finishes the work.
        print("vaultsync: interrupted; every file is whole and the next pass finishes the work", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError as exc:
        if not _stdout_closed():
            return _crash(exc)
        # The reader of our output went away (``| head``): not a fault. Python would otherwise report the
        # failed flush of the rest of the output at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.PIPE_CLOSED
    except Exception as exc:
        from vaultsync.api import refused

        if why := refused(exc, _places(args)):
            print(f"vaultsync: stopped: {why}", file=sys.stderr)
            return ExitCode.SAFETY_STOP
        return _crash(exc)


def _places(args: argparse.Namespace) -> list[Path]:
    """The folders of the config ``args`` names, for a message about their disk; none when it cannot be read."""
    try:
        cfg = configmod.load(configmod.config_path(args.config))
    except (ConfigError, OSError):
        return []
    return [cfg.vault, cfg.workspace, cfg.life]


def _stdout_closed() -> bool:
    """Whether standard output is a pipe nobody reads any more, as opposed to a pipe to some other program (git)
    breaking, which is a fault to report."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _crash(exc: BaseException) -> int:
    """One line saying what broke and where the whole traceback is, instead of the traceback on the terminal."""
    text = "".join(traceback.format_exception(exc))
    try:
        folder = configmod.crash_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"crash-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
        path.write_text(f"vaultsync {__version__}, {' '.join(sys.argv)}\n{text}", encoding="utf-8")
        where = f"the full traceback is in {path}"
    except OSError:
        where = "the full traceback could not be saved:\n" + text
    cause = f"{type(exc).__name__}: {exc}".splitlines()[0]
    print(f"vaultsync: crashed ({cause}); {where}; please report it", file=sys.stderr)
    return ExitCode.CRASH


def _run(args: argparse.Namespace) -> int:
    path = configmod.config_path(args.config)
    try:
        if args.command == "init":
            return _init(args, path)
        if args.command == "schedule":
            from vaultsync.cli_schedule import schedule_command

            return schedule_command(args.action, path, args)
        cfg = configmod.load(path)
    except ConfigError as exc:
        print(f"vaultsync: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    from vaultsync.api import git_missing

    missing = git_missing()
    if missing:
        print(f"vaultsync: {missing}", file=sys.stderr)
        return ExitCode.USAGE
    if args.command in HEALTH_COMMANDS:
        from vaultsync.cli_curation import health_command

        return health_command(cfg, args)
    if args.command == "watch":
        from vaultsync.watch import watch_command

        return watch_command(cfg, args.json)
    if args.command in ("recall", "log"):
        from vaultsync.cli_recall import log_command, recall_command

        return recall_command(args, cfg) if args.command == "recall" else log_command(args, cfg)
    if args.command == "obsidian":
        from vaultsync.cli_obsidian import obsidian_command

        return obsidian_command(cfg, args)
    if args.command in ("serve", "mcp"):
        from vaultsync.cli_serve import serve_command

        return serve_command(cfg, args)

    from vaultsync.api import LockHeld, PassOptions, status, sync

    try:
        progress = _ProgressBar() if sys.stderr.isatty() and not args.json else None
        batch = getattr(args, "batch", None)
        sizes = {} if batch is None else {"import_batch": max(0, batch), "full_batch": max(0, batch)}
        options = PassOptions(
            dry_run=getattr(args, "dry_run", False),
            confirm_deletes=getattr(args, "yes", False),
            progress=progress,
            **sizes,
        )
        kind = "scheduled" if getattr(args, "scheduled", False) else "sync"
        report = status(cfg, options) if args.command == "status" else sync(cfg, options, kind)
    except LockHeld:
        print("vaultsync: another pass is running (lock held); try again when it ends", file=sys.stderr)
        return ExitCode.LOCKED
    if args.command == "status" and not args.json:
        from vaultsync.cli_schedule import print_runs

        print_runs(path, cfg)  # after the pass: a status that met the lock says only that
    if args.json:
        report.write_json(sys.stdout)
    elif getattr(args, "quiet", False):
        _print_quiet(report)
    else:
        _print_report(report, terminal=sys.stdout.isatty())
    return int(report.exit_code)


def _print_quiet(report: Report) -> None:
    """``--quiet``: what needs a person, and nothing on a pass that went well; timestamped, since such lines end up
    in a log or a cron mail read later."""
    stamp = datetime.now().astimezone().isoformat(timespec="seconds")
    for line in report.attention():
        print(f"{stamp} {line}")


def _scheduled(args: argparse.Namespace) -> int:
    """A pass started by cron or a systemd timer: its output goes to the rotated log, led by one timestamped line."""
    from vaultsync.api import absolute_config, write_log

    config = absolute_config(configmod.config_path(args.config))
    output = io.StringIO()
    try:
        with redirect_stdout(output), redirect_stderr(output):
            code = _run(args)
    except Exception as exc:
        from vaultsync.api import refused

        why = refused(exc, _places(args))  # a full or read-only disk: main says so in one line, exit 4
        tail = f"vaultsync: stopped: {why}\n" if why else traceback.format_exc()
        write_log(config, ExitCode.SAFETY_STOP if why else ExitCode.CRASH, output.getvalue() + tail)
        raise
    write_log(config, code, output.getvalue())
    return code


def _init(args: argparse.Namespace, path: Path) -> int:
    from vaultsync.api import git_missing, init_vault

    missing = git_missing()
    if missing:
        print(f"vaultsync: {missing}", file=sys.stderr)
        return ExitCode.USAGE
    result = init_vault(Path(args.workspace), Path(args.life), Path(args.vault), path, args.remote, args.clone)
    print(f"config: {result.config_path}")
    if result.cloned:
        print("cloned the vault from its remote (origin)")
    for rel in result.created:
        print(f"created: {rel}")
    for rel in result.kept:
        print(f"kept (already there): {rel}")
    for rel in result.updated:
        print(f"updated (your entries kept): {rel}")
    if result.repo_created:
        print("created a git repository in the vault")
    if result.remote_added:
        print("added the remote origin; the next pass pushes to it")
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}")
    if result.token_created:
        print(f"created the API token (mode 0600): {result.token_path}")
    return ExitCode.CLEAN


if __name__ == "__main__":
    sys.exit(main())
