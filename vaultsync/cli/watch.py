"""``vaultsync watch``: the face that prints one line per pass (or its JSON) and turns Ctrl-C and SIGTERM into a
clean stop; the watching itself is ``vaultsync.app.watch``."""

from __future__ import annotations

import json
import signal
import sys
import threading
from datetime import datetime
from types import FrameType

from vaultsync.api import watch
from vaultsync.config import Config
from vaultsync.model import ExitCode, Report


def _line(report: Report) -> str:
    """The pass in one line, in the words of the scheduled log: what changed, conflicts, problems."""
    line = f"{datetime.now():%H:%M:%S} exit {int(report.exit_code)}: {report.summary()}"
    return line + "".join(f"; {d}" for d in report.attention(open_copies=False, stop=False))


def watch_command(cfg: Config, as_json: bool) -> int:
    """Watch until SIGINT or SIGTERM; the pass running then finishes, the lock is released, and the exit is 0."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    def on_pass(report: Report) -> None:
        print(json.dumps(report.to_json(), ensure_ascii=False) if as_json else _line(report), flush=True)

    def on_note(text: str) -> None:
        print(f"vaultsync: {text}", file=sys.stderr, flush=True)

    on_note(f"watching {cfg.workspace}, {cfg.life} and {cfg.vault}; Ctrl-C stops")
    watch(cfg, on_pass, on_note, stop)
    return ExitCode.CLEAN
