"""How a command says it failed, one rendering for every command: one line on standard error,
``vaultsync: <what went wrong>; <what to do>``, and, when the command was asked for ``--json``, the same as one
JSON object on standard output, so a script reading the JSON always has a document to parse:
``{"kind": ..., "message": ..., "hint": ..., "exit_code": ...}``.

The kinds are errors.py's (``invalid``, ``not_found``, ``ambiguous``, ``history``, ``busy``, ``stopped`` ...)
and the command line's own: ``usage`` (a command line argparse refuses), ``config``, ``schedule``, ``setup`` (git
or a port this machine lacks), ``crash`` and ``interrupted``. docs/cli.md lists them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence

from vaultsync.model import ExitCode

_CLUSTER = re.compile(r"^-[a-zA-Z]*j[a-zA-Z]*$")  # -j, or short flags run together: -nj


def asked_json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def argv_asks_json(argv: Sequence[str]) -> bool:
    """Whether a command line argparse could not read asked for ``--json`` (before a ``--``, if any)."""
    words = list(argv)
    words = words[: words.index("--")] if "--" in words else words
    return any(word == "--json" or _CLUSTER.match(word) for word in words)


def fail(as_json: bool, kind: str, message: str, hint: str = "", code: int = ExitCode.USAGE) -> int:
    """Say the failure (and its JSON object under ``--json``); returns the exit code to end with."""
    print(f"vaultsync: {message}" + (f"; {hint}" if hint else ""), file=sys.stderr)
    if as_json:
        say_json(kind, message, hint, code)
    return int(code)


def fail_on(as_json: bool, exc: BaseException, code: int = ExitCode.USAGE, lead: str = "", fallback: str = "") -> int:
    """``fail`` for an error: its words, after ``lead`` (the option or the act it is about). The hint is the
    error's own, else its words' last clause, the fix (``...: no config file; create one with vaultsync init``),
    else ``fallback``, the command's word on what to do, which the line on standard error then ends with too."""
    words = lead + str(exc)
    hint = str(getattr(exc, "hint", "") or "")
    message, _, fix = words.rpartition("; ") if not hint and "; " in words else (words, "", "")
    if not (hint or fix) and fallback:
        words, fix = f"{words}; {fallback}", fallback
    print(f"vaultsync: {words}", file=sys.stderr)
    if as_json:
        from vaultsync.api import kind_of

        say_json(kind_of(exc), message, hint or fix, code)
    return int(code)


def say_json(kind: str, message: str, hint: str, code: int) -> None:
    document = {"kind": kind, "message": message, "hint": hint, "exit_code": int(code)}
    print(json.dumps(document, ensure_ascii=False, indent=2), flush=True)
