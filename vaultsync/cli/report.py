"""How a pass's report is printed for a person: a table on a terminal, plain lines for cron's log or a pipe,
timestamped lines under ``--quiet``, and a progress bar for a pass that writes many files.

It is its own module because it is the one part of the command line that formats rather than runs: ``cli.py``
decides which form to print, this says how each looks. rich is imported only inside it, when a terminal is there
to show it, so a pass under cron never loads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

from vaultsync.model import Report, phrase

TABLE_ROWS = 40


def print_report(report: Report, terminal: bool) -> None:
    """The report for a person: a rich table on a terminal, plain lines elsewhere (cron's log, a pipe).

    Plain lines are easier to grep in a log, and an hourly pass under cron does not load rich for them (some
    fifty modules: about a tenth of a small pass with a cold cache).
    """
    remote = _remote_line(report)
    if not (report.stopped or report.changes or report.actions or report.problems or report.open_conflicts) and not (
        report.held
    ):
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
COLOURS = {
    "held": "bold yellow",
    "error": "red",
    "warning": "yellow",
    "note": "dim",
    "conflict": "bold yellow",
    "open conflict": "yellow",
}


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


class ProgressBar:
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


def print_quiet(report: Report) -> None:
    """``--quiet``: what needs a person, and nothing on a pass that went well; timestamped, since such lines end up
    in a log or a cron mail read later."""
    stamp = datetime.now().astimezone().isoformat(timespec="seconds")
    for line in report.attention():
        print(f"{stamp} {line}")
