"""The text of a schedule: crontab entries and systemd units for one config, and edits of a crontab's text.

Pure: no process runs and no file is read here, so the edits are tested on any text a crontab may hold. A
user's crontab holds lines vaultsync did not write, and an edit must leave every one of them byte for byte.
python-crontab was the first choice for these edits, but it rewrites lines it did not create: it drops the
quotes of ``MAILTO="..."``, collapses aligned columns, moves a trailing comment onto a line of its own and
turns an entry's ``\\%`` into ``%`` (``tests/test_schedule.py`` keeps that finding checked). So the edits here
work on lines: each of our entries is a marker comment naming the job and the config, followed by its line.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

MARK = "# vaultsync schedule"
_MARKER = re.compile(r"^# vaultsync schedule (\S+) (\S+) (.+)$")
_EVERY = re.compile(r"^(\d+)([mhd])$")
MINUTE_STEPS = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)  # what divides an hour, so each run is as far from the next
HOUR_STEPS = (1, 2, 3, 4, 6, 8, 12)
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NICKNAMES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}


class TimingError(ValueError):
    """An interval cron and systemd cannot both run at even steps; the message lists the ones they can."""


@dataclass(frozen=True)
class Timing:
    """When a job runs: cron's five fields, systemd's ``OnCalendar``, and the spec the marker carries."""

    cron: str
    calendar: str
    spec: str  # "every=1h", "daily=20:00", "weekly=sun-03:00": no spaces, so a marker splits on them
    interval: timedelta


def every(text: str) -> Timing:
    """``--every``: minutes that divide an hour, hours that divide a day, or one day."""
    found = _EVERY.match(text.strip())
    n, unit = (int(found[1]), found[2]) if found else (0, "")
    if unit == "m" and n in MINUTE_STEPS:
        return Timing(f"*/{n} * * * *", f"*-*-* *:00/{n}:00", f"every={n}m", timedelta(minutes=n))
    if (unit == "h" and n == 24) or (unit == "d" and n == 1):
        return Timing("0 0 * * *", "*-*-* 00:00:00", "every=1d", timedelta(days=1))
    if unit == "h" and n in HOUR_STEPS:
        hours = "*" if n == 1 else f"*/{n}"
        return Timing(f"0 {hours} * * *", f"*-*-* 00/{n}:00:00", f"every={n}h", timedelta(hours=n))
    raise TimingError(
        f"--every {text!r}: use minutes that divide an hour ({', '.join(f'{m}m' for m in MINUTE_STEPS)}), "
        f"hours that divide a day ({', '.join(f'{h}h' for h in HOUR_STEPS)}) or 1d"
    )


def daily(hour: int, minute: int) -> Timing:
    """Once a day at a fixed time (the janitor's 20:00)."""
    return Timing(
        f"{minute} {hour} * * *", f"*-*-* {hour:02d}:{minute:02d}:00", f"daily={hour:02d}:{minute:02d}", timedelta(1)
    )


def weekly(day: str, hour: int, minute: int) -> Timing:
    """Once a week (the review's Sunday 03:00); ``day`` is a three-letter English day name."""
    number = _DAYS.index(day)
    return Timing(
        f"{minute} {hour} * * {number}",
        f"{day.capitalize()} *-*-* {hour:02d}:{minute:02d}:00",
        f"weekly={day}-{hour:02d}:{minute:02d}",
        timedelta(7),
    )


def timing_of(spec: str) -> Timing:
    """The timing a marker's spec stands for (the inverse of ``Timing.spec``)."""
    kind, _, value = spec.partition("=")
    if kind == "every":
        return every(value)
    if kind == "daily":
        hour, minute = value.split(":")
        return daily(int(hour), int(minute))
    if kind == "weekly":
        day, _, clock = value.partition("-")
        hour, minute = clock.split(":")
        return weekly(day, int(hour), int(minute))
    raise TimingError(f"unknown schedule spec {spec!r}")


@dataclass(frozen=True)
class Job:
    """One command the schedule runs for a config.

    ``JOBS`` lists them; ``timing`` None means the interval ``schedule install --every`` gives. The janitor runs
    daily at 20:00 and the review on Sundays at 03:00, as the agent setups this tool comes from run them.
    """

    name: str
    args: tuple[str, ...]
    timing: Timing | None = None


JOBS = (
    Job("sync", ("sync",)),
    Job("janitor", ("janitor",), daily(20, 0)),
    Job("review", ("review",), weekly("sun", 3, 0)),
)


@dataclass(frozen=True)
class Entry:
    """One job scheduled for one config, with everything the line needs: cron's environment is nearly empty."""

    job: str
    timing: Timing
    config: Path  # absolute
    argv: tuple[str, ...]  # absolute executable first
    path_env: str  # a PATH that finds git and the executable

    @property
    def marker(self) -> str:
        return f"{MARK} {self.job} {self.timing.spec} {self.config}"


def entries(jobs: Sequence[Job], interval: Timing, config: Path, launcher: Sequence[str], path_env: str) -> list[Entry]:
    """Every job's entry for ``config``; ``launcher`` is the absolute command that starts vaultsync."""
    return [
        Entry(
            job.name,
            job.timing or interval,
            config,
            (*launcher, *job.args, "--scheduled", "--config", str(config)),
            path_env,
        )
        for job in jobs
    ]


def cron_block(entry: Entry) -> str:
    """The marker line and the entry line; ``%`` is escaped, since cron turns a bare one into a newline."""
    command = " ".join(shlex.quote(arg) for arg in entry.argv)
    line = f"{entry.timing.cron} PATH={shlex.quote(entry.path_env)} {command}".replace("%", "\\%")
    return f"{entry.marker}\n{line}\n"


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on ``\\n`` only (what cron splits on), so joining them gives the bytes back."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


@dataclass(frozen=True)
class Found:
    """One of our entries as it stands in a crontab (the line may have been edited by hand since)."""

    job: str
    spec: str
    config: str
    line: str  # the entry line without its newline, "" when the marker stands alone

    @property
    def cron_fields(self) -> str | None:
        """The five time fields of the line (nicknames like ``@hourly`` spelled out); None for ``@reboot``."""
        words = self.line.split()
        if words and words[0].startswith("@"):
            return _NICKNAMES.get(words[0])
        return " ".join(words[:5]) if len(words) > 5 else None


def _is_entry(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#") and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", stripped)


def _owned(lines: list[str], config: str | None) -> list[tuple[int, int, Found]]:
    """(start, end, found) for each marker (for ``config``, or any) and the entry line right after it."""
    out = []
    for i, line in enumerate(lines):
        marker = _MARKER.match(line.rstrip("\n"))
        if not marker or (config is not None and marker[3] != config):
            continue
        after = lines[i + 1] if i + 1 < len(lines) else ""
        takes = _is_entry(after) and shlex.quote(marker[3]).replace("%", "\\%") in after
        entry_line = after.rstrip("\n") if takes else ""
        out.append((i, i + 2 if takes else i + 1, Found(marker[1], marker[2], marker[3], entry_line)))
    return out


def find(text: str, config: Path | None = None) -> list[Found]:
    """Our entries in a crontab's text: ``config``'s, or every config's."""
    return [found for _, _, found in _owned(_lines(text), None if config is None else str(config))]


def with_entries(text: str, config: Path, blocks: Sequence[str]) -> str:
    """``text`` with ``config``'s entries replaced by ``blocks`` (where the first stood, else at the end).

    Every other line keeps its bytes. With no blocks this is removal; installing what is there already gives
    ``text`` back unchanged.
    """
    lines = _lines(text)
    owned = _owned(lines, str(config))
    skip = {n for start, end, _ in owned for n in range(start, end)}
    out: list[str] = []
    placed = False
    for n, line in enumerate(lines):
        if n in skip:
            if not placed:
                out.extend(blocks)
                placed = True
            continue
        out.append(line)
    if not placed and blocks:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"  # cron refuses a crontab whose last line has no newline
        out.extend(blocks)
    return "".join(out)


def config_id(config: Path) -> str:
    """A short name that is the same for one config every time and differs between configs."""
    return hashlib.sha1(str(config).encode()).hexdigest()[:10]


def unit_name(job: str, config: Path) -> str:
    return f"vaultsync-{job}-{config_id(config)}"


def span(interval: timedelta) -> str:
    """An interval as ``--every`` spells it (30m, 1h, 1d)."""
    minutes = int(interval.total_seconds()) // 60
    if minutes % (24 * 60) == 0:
        return f"{minutes // (24 * 60)}d"
    return f"{minutes // 60}h" if minutes % 60 == 0 else f"{minutes}m"


def systemd_word(arg: str) -> str:
    """One word of a unit file's command line: systemd expands ``%`` and ``$``, and splits on spaces."""
    arg = arg.replace("%", "%%").replace("$", "$$")
    if re.fullmatch(r"[\w@%+=:,./-]+", arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def service_text(entry: Entry) -> str:
    description = f"vaultsync {entry.job} for {entry.config}".replace("%", "%%")
    return (
        f"{entry.marker}\n[Unit]\nDescription={description}\n\n[Service]\nType=oneshot\n"
        f"Environment={systemd_word('PATH=' + entry.path_env)}\n"
        f"ExecStart={' '.join(systemd_word(arg) for arg in entry.argv)}\n"
    )


def timer_text(entry: Entry) -> str:
    """The timer; ``Persistent`` runs a pass missed while the machine was off as soon as it is back."""
    description = f"vaultsync {entry.job} for {entry.config}, {entry.timing.spec}".replace("%", "%%")
    return (
        f"{entry.marker}\n[Unit]\nDescription={description}\n\n[Timer]\nOnCalendar={entry.timing.calendar}\n"
        f"Persistent=true\n\n[Install]\nWantedBy=timers.target\n"
    )


def marker_of(text: str) -> Found | None:
    """The marker a unit file starts with, or None for a file vaultsync did not write."""
    found = _MARKER.match(text.partition("\n")[0])
    return Found(found[1], found[2], found[3], "") if found else None


def _field(text: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if body == "*":
            start, end = low, high
        elif "-" in body:
            start, end = (int(v) for v in body.split("-"))
        else:
            start = int(body)
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return values


def next_run(fields: str, after: datetime) -> datetime | None:
    """The first minute after ``after`` that cron's five fields match; None when they do not parse.

    Names of months and days are not read: vaultsync writes numbers, and a hand-edited line may only lose its
    next-run line in ``status``.
    """
    try:
        minute, hour, dom, month, dow = fields.split()
        minutes, hours = sorted(_field(minute, 0, 59)), sorted(_field(hour, 0, 23))
        days, months = _field(dom, 1, 31), _field(month, 1, 12)
        weekdays = {d % 7 for d in _field(dow, 0, 7)}
    except ValueError:
        return None
    start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = start.replace(hour=0, minute=0)
    for _ in range(366 * 5):
        weekday = (day.weekday() + 1) % 7  # cron counts from Sunday
        if dom != "*" and dow != "*":
            day_ok = day.day in days or weekday in weekdays  # cron's rule when both are restricted
        else:
            day_ok = day.day in days and weekday in weekdays
        if day.month in months and day_ok:
            for h in hours:
                for m in minutes:
                    when = day.replace(hour=h, minute=m)
                    if when >= start:
                        return when
        day += timedelta(days=1)
    return None
