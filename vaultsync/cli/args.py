"""The argument parser's habits, as people know them from git and clig.dev: short flags for the common options,
"did you mean" for a mistyped command or option, and ``--config`` before or after the command.

Short flags are given here once, by the long option's name, so every command that has ``--json`` also has
``-j`` and the help, the docs test and shell completion all see them.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["SHORT", "Parser"]

SHORT = {"--config": "-c", "--dry-run": "-n", "--json": "-j", "--quiet": "-q"}
_CHOICE = re.compile(r"invalid choice: '([^']*)'")


class Parser(argparse.ArgumentParser):
    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        short = [SHORT[n] for n in names if n in SHORT and SHORT[n] not in names]
        return super().add_argument(*short, *names, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            where = _command_parser(self, parsed)
            hint = _nearest(extras[0], _options(where)) if extras[0].startswith("-") else ""
            where.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def error(self, message: str) -> NoReturn:
        found = _CHOICE.search(message)
        if found:
            message += _nearest(found.group(1), _choices(self))
        super().error(message)


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
