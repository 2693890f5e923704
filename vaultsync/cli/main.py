"""The command line: a thin face over the library; exit codes live here, the commands and options in
``cli_parser.py``, and how a pass's report looks in ``cli_report.py``."""

from __future__ import annotations

import argparse
import io
import os
import select
import sys
import traceback
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime
from pathlib import Path

from vaultsync import __version__
from vaultsync import config as configmod
from vaultsync.api import ConfigError
from vaultsync.cli import parser as cli_parser
from vaultsync.cli.failure import asked_json, fail, fail_on
from vaultsync.cli.report import ProgressBar, print_quiet, print_report
from vaultsync.config import Config
from vaultsync.model import ExitCode

HEALTH_COMMANDS = ("janitor", "review", "extract")


def main(argv: Sequence[str] | None = None) -> int:
    parser = cli_parser.build()
    args = parser.parse_args(argv)
    if args.command is None:  # a bare `vaultsync` (or with --config alone): the help, as `vaultsync help`
        parser.print_help()
        return ExitCode.CLEAN
    if getattr(args, "run", None):  # a command needing no config (completion, help)
        return int(args.run(args))
    try:
        if getattr(args, "scheduled", False):
            return _scheduled(args)
        return _run(args)
    except KeyboardInterrupt:
        # Every write is a file moved into place and the base is saved last, so a pass stopped anywhere leaves
        # each file whole; the lock goes with the process. The next pass finishes the work.
        hint = "every file is whole and the next pass finishes the work"
        return fail(asked_json(args), "interrupted", "interrupted", hint, ExitCode.INTERRUPTED)
    except BrokenPipeError as exc:
        if not _stdout_closed():
            return _crash(exc, asked_json(args))
        # The reader of our output went away (``| head``): not a fault. Python would otherwise report the
        # failed flush of the rest of the output at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.PIPE_CLOSED
    except Exception as exc:
        from vaultsync.api import refused

        if why := refused(exc, _places(args)):
            return fail(asked_json(args), "stopped", f"stopped: {why}", code=ExitCode.SAFETY_STOP)
        return _crash(exc, asked_json(args))


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


def _crash(exc: BaseException, as_json: bool) -> int:
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
    return fail(as_json, "crash", f"crashed ({cause})", f"{where}; please report it", ExitCode.CRASH)


def _run(args: argparse.Namespace) -> int:
    path = configmod.config_path(args.config)
    try:
        if args.command == "init":
            from vaultsync.cli.init import init_command

            return init_command(args, path)
        if args.command == "schedule":
            from vaultsync.cli.schedule import schedule_command

            return schedule_command(args.action, path, args)
        if args.command == "doctor":
            from vaultsync.cli.doctor import doctor_command

            return doctor_command(path, args)
        if args.command == "service":
            from vaultsync.cli.service import service_command

            return service_command(path, args)
        cfg = configmod.load(path)
        if args.command == "openclaw":  # needs no git: OpenClaw keeps the plugin, not the vault
            from vaultsync.cli.openclaw import openclaw_command

            return openclaw_command(cfg, args, path)
    except ConfigError as exc:
        return fail_on(asked_json(args), exc)
    from vaultsync.api import git_missing

    missing = git_missing()
    if missing:
        return fail(asked_json(args), "setup", missing)
    code = _face_command(cfg, args)
    return _pass_command(cfg, args, path) if code is None else code


def _face_command(cfg: Config, args: argparse.Namespace) -> int | None:
    """A command run by its own face module, imported only then; None for ``sync`` and ``status``, run here."""
    if args.command in HEALTH_COMMANDS:
        from vaultsync.cli.curation import health_command

        return health_command(cfg, args)
    if args.command == "watch":
        from vaultsync.cli.watch import watch_command

        return watch_command(cfg, args.json)
    if args.command in ("recall", "log"):
        from vaultsync.cli.recall import log_command, recall_command

        return recall_command(args, cfg) if args.command == "recall" else log_command(args, cfg)
    if args.command == "obsidian":
        from vaultsync.cli.obsidian import obsidian_command

        return obsidian_command(cfg, args)
    if args.command in ("accept", "restore"):
        from vaultsync.cli.held import held_command

        return held_command(cfg, args)
    if args.command in ("serve", "mcp"):
        from vaultsync.cli.serve import serve_command

        return serve_command(cfg, args)
    return None


def _pass_command(cfg: Config, args: argparse.Namespace, path: Path) -> int:
    """``sync`` or ``status``: one pass, then its report as asked (JSON, the quiet lines, or for a person)."""
    from vaultsync.api import LockHeld, PassOptions, status, sync

    try:
        progress = ProgressBar() if sys.stderr.isatty() and not args.json else None
        batch = getattr(args, "batch", None)
        sizes = {} if batch is None else {"import_batch": batch, "full_batch": batch}
        options = PassOptions(
            dry_run=getattr(args, "dry_run", False),
            confirm_deletes=getattr(args, "yes", False),
            progress=progress,
            **sizes,
        )
        kind = "scheduled" if getattr(args, "scheduled", False) else "sync"
        report = status(cfg, options) if args.command == "status" else sync(cfg, options, kind)
    except LockHeld:
        return fail(args.json, "busy", "another pass is running (lock held)", "try again when it ends", ExitCode.LOCKED)
    if args.command == "status" and not args.json:
        from vaultsync.cli.schedule import print_runs

        print_runs(path, cfg)  # after the pass: a status that met the lock says only that
        if cfg.embeddings.url:
            from vaultsync.api import semantic_state

            print(semantic_state(cfg))
    if args.json:
        report.write_json(sys.stdout)
    elif getattr(args, "quiet", False):
        print_quiet(report)
    else:
        print_report(report, terminal=sys.stdout.isatty())
    return int(report.exit_code)


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
