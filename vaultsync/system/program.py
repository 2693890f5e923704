"""The programs a person configures (``[review] command``, ``[extract] command``): JSON in on standard input, an
answer out on standard output, both UTF-8.

The answer is decoded strictly: a program printing in another encoding (Latin-1 from a script under a non-UTF-8
locale) would otherwise have its accented letters stored as U+FFFD in the memory, or crash the run. Such an
answer is refused whole, with a message naming the command and the fix.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass


class ProgramFailed(Exception):
    """The program could not run, failed, or answered in bytes that are not UTF-8; the message says which and
    what to do, and starts with what the command did (the caller names the command)."""


@dataclass(frozen=True)
class Answer:
    returncode: int
    stdout: str
    stderr: str


def run_program(command: str, stdin: str, timeout: float) -> Answer:
    """Run ``command`` (split as a shell would, no shell) with ``stdin``; raises ``ProgramFailed`` when it cannot
    run or its standard output is not UTF-8. A non-zero exit is the caller's to judge, so it is returned."""
    try:
        done = subprocess.run(
            shlex.split(command), input=stdin.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise ProgramFailed(f"could not run: {exc}") from None
    stderr = done.stderr.decode("utf-8", "replace")
    try:
        stdout = done.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProgramFailed(
            f"answered in bytes that are not UTF-8 (byte 0x{done.stdout[exc.start]:02x} at offset {exc.start}); "
            "make it write UTF-8 (for a Python script: PYTHONIOENCODING=utf-8, or a UTF-8 locale such as "
            "LANG=C.UTF-8)"
        ) from None
    return Answer(done.returncode, stdout, stderr)
