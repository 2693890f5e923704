"""The argument parser's habits, as people know them from git and clig.dev: short flags for the common options,
"did you mean" for a mistyped command or option, and ``--config`` before or after the command.

Short flags are given here once, by the long option's name, so every command that has ``--json`` also has
``-j`` and the help, the docs test and shell completion all see them. The option types (``count``, ``PORT``,
``interval``) are here too: a number or an interval a command cannot use is refused while the command line is
read, exit 2 with the option named, before any file is opened.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from vaultsync.cli.failure import argv_asks_json, say_json
from vaultsync.model import ExitCode

__all__ = ["PORT", "SHORT", "Parser", "count", "interval"]

SHORT = {"--config": "-c", "--dry-run": "-n", "--json": "-j", "--quiet": "-q"}
_CHOICE = re.compile(r"invalid choice: '([^']*)'")


class _Refused(Exception):
    """A command line argparse refused, carried from the sub-parser that read it up to ``parse_args``, which
    knows the whole command line and so whether ``--json`` was asked."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class Parser(argparse.ArgumentParser):
    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        short = [SHORT[n] for n in names if n in SHORT and SHORT[n] not in names]
        return super().add_argument(*short, *names, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        argv = list(sys.argv[1:] if args is None else args)
        try:
            parsed, extras = self.parse_known_args(argv, namespace)
            if extras:
                where = _command_parser(self, parsed)
                hint = _nearest(extras[0], _options(where)) if extras[0].startswith("-") else ""
                where.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        except _Refused as refused:
            if argv_asks_json(argv):
                say_json("usage", refused.message, f"see `{refused.parser.prog} --help`", ExitCode.USAGE)
            argparse.ArgumentParser.error(refused.parser, refused.message)  # the usage and the message; exit 2
        return parsed

    def error(self, message: str) -> NoReturn:
        found = _CHOICE.search(message)
        if found:
            message += _nearest(found.group(1), _choices(self))
        raise _Refused(self, message)


def count(least: int = 1, most: int | None = None, what: str = "") -> Callable[[str], int]:
    """The type of an option taking a whole number from ``least`` (up to ``most``): ``--limit 0`` or
    ``--batch -5`` is refused as a usage error naming the range, never read as "none" or "all"."""

    def whole(text: str) -> int:
        try:
            number = int(text.strip())
        except ValueError:
            number = None
        if number is None or number < least or (most is not None and number > most):
            span = f"from {least} to {most}" if most is not None else f"of {least} or more"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what or 'a whole number'} {span}")
        return number

    whole.__name__ = what or "number"  # argparse names the type in its message when the function raises else
    return whole


PORT = count(1, 65535, "a port number")


def interval(text: str) -> str:
    """The type of ``--every``: an interval cron and systemd both keep (``30m``, ``1h``, ``1d``), checked by the
    same rule the schedule is written with; the text itself is what the command is given."""
    from vaultsync.api import ScheduleError, check_interval

    try:
        check_interval(text)
    except ScheduleError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: " + str(exc).removeprefix(f"--every {text!r}: ")) from None
    return text


def _nearest(given: str, known: Sequence[str]) -> str:
    import difflib  # only when a command line is refused

    close = difflib.get_close_matches(given.split("=", 1)[0], known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in _subparsers(parser) for name in action.choices]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for action in parser._actions for o in action.option_strings if o.startswith("--")]


def _subparsers(parser: argparse.ArgumentParser) -> list[Any]:
    # argparse keeps its arguments in ``_actions``; it has no public way to list them
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def _command_parser(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The sub-parser of the command that was given (``schedule install`` included), whose options are the ones
    a mistyped option was meant to be."""
    here = parser
    for dest in ("command", "action"):
        name = getattr(parsed, dest, None)
        found = next((a.choices[name] for a in _subparsers(here) if name in a.choices), None)
        if found is None:
            break
        here = found
    return here
