"""The schedule use case: install, remove and show the entries that run vaultsync by itself, and the log of those runs.

The crontab is read and written through the real ``crontab`` command (the only supported way to change it) and
edited as text by ``vaultsync.text.schedule``, which leaves the user's other lines byte for byte. The run lock
keeps a scheduled pass and a watching one apart, so both may be installed at once.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from vaultsync.app.service_units import owns_sync, unit_dir
from vaultsync.config import Config
from vaultsync.errors import ScheduleError
from vaultsync.state import runs
from vaultsync.system.crontab import has_crontab, read_crontab, write_crontab
from vaultsync.system.supervisor import append_log
from vaultsync.text import schedule as text


@dataclass
class Outcome:
    """What ``install`` or ``remove`` did, for the face to print."""

    changed: list[str] = field(default_factory=list)  # "crontab" or unit file paths
    unchanged: bool = False
    lines: list[str] = field(default_factory=list)  # the entries as written
    then: list[str] = field(default_factory=list)  # commands the user runs next (systemctl)
    log: Path | None = None
    notes: list[str] = field(default_factory=list)  # what was left out, and why


def absolute_config(path: Path) -> Path:
    """The config path as the schedule names it: absolute, since cron starts in $HOME."""
    found = Path(os.path.abspath(path.expanduser()))
    if "\n" in str(found):
        raise ScheduleError(f"{found!r}: a config path with a newline cannot be named in a crontab")
    return found


def launcher() -> tuple[str, ...]:
    """The absolute command that starts this vaultsync: its own script (pipx's ~/.local/bin/vaultsync, kept as a
    link so an upgrade is picked up), else this interpreter with ``-m vaultsync.cli``."""
    script = Path(sys.argv[0])
    if script.name == "vaultsync" and script.is_file():
        return (os.path.abspath(script),)
    return (os.path.abspath(sys.executable), "-m", "vaultsync.cli")


def path_env(command: tuple[str, ...]) -> str:
    """A PATH for cron's nearly empty environment that finds git, and the executable's folder."""
    git = shutil.which("git")
    if git is None:
        raise ScheduleError("git is not on PATH; install git first (every pass runs it)")
    folders = [os.path.dirname(git), os.path.dirname(command[0]), "/usr/local/bin", "/usr/bin", "/bin"]
    return ":".join(dict.fromkeys(folders))


def log_path(config: Path) -> Path:
    """The log of one config's scheduled runs, under the XDG state folder (~/.local/state/vaultsync/log)."""
    import platformdirs

    return platformdirs.user_log_path("vaultsync") / f"{config.stem}-{text.config_id(config)}.log"


def install(config: Path, interval: str = "1h", systemd: bool = False) -> Outcome:
    """Add this config's entries to the crontab (or write systemd units); installing twice changes nothing."""
    timing = every_checked(interval)
    command = launcher()
    service_syncs = owns_sync(config)
    jobs = [job for job in text.JOBS if not (service_syncs and job.name == "sync")]
    found = text.entries(jobs, timing, config, command, path_env(command))
    outcome = Outcome(log=log_path(config))
    if service_syncs:
        outcome.changed += _drop_sync_units(config)
        outcome.notes.append(
            "the hourly pass is left out: the service watches and runs it (vaultsync service status); "
            "`vaultsync service install` without --watch gives it back to the schedule"
        )
    if systemd:
        folder = unit_dir()
        for entry in found:
            name = text.unit_name(entry.job, config)
            for suffix, body in ((".service", text.service_text(entry)), (".timer", text.timer_text(entry))):
                path = folder / (name + suffix)
                if _read(path) != body:
                    folder.mkdir(parents=True, exist_ok=True)
                    path.write_text(body, encoding="utf-8")
                    outcome.changed.append(str(path))
            outcome.lines.append(f"{name}.timer: {entry.timing.calendar}")
            outcome.then.append(f"systemctl --user enable --now {name}.timer")
        outcome.then.insert(0, "systemctl --user daemon-reload")
    else:
        old = read_crontab() or ""
        blocks = [text.cron_block(entry) for entry in found]
        new = text.with_entries(old, config, blocks)
        if new != old:
            write_crontab(new)
            outcome.changed.append("crontab")
        outcome.lines = [block.splitlines()[1] for block in blocks]
    outcome.unchanged = not outcome.changed
    return outcome


def drop_sync(config: Path) -> list[str]:
    """Take the sync job out of this config's schedule, keeping the janitor's and the review's entries: what was
    changed ("crontab", unit files). For a service that takes the hourly pass over."""
    changed = _drop_sync_units(config)
    if not has_crontab():
        return changed
    old = read_crontab() or ""
    kept = [f for f in text.find(old, config) if f.job != "sync" and f.line]
    new = text.with_entries(old, config, [f"{text.MARK} {f.job} {f.spec} {f.config}\n{f.line}\n" for f in kept])
    if new != old:
        write_crontab(new)
        changed.append("crontab")
    return changed


def _drop_sync_units(config: Path) -> list[str]:
    removed = []
    for path in our_units(config):
        marker = text.marker_of(_read(path) or "")
        if marker and marker.job == "sync":
            path.unlink()
            (unit_dir() / "timers.target.wants" / path.name).unlink(missing_ok=True)
            removed.append(str(path))
    return removed


def every_checked(interval: str) -> text.Timing:
    try:
        return text.every(interval)
    except text.TimingError as exc:
        raise ScheduleError(str(exc)) from None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def our_units(config: Path) -> list[Path]:
    folder = unit_dir()
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("vaultsync-*")):
        marker = text.marker_of(_read(path) or "")
        if marker and marker.config == str(config):
            out.append(path)
    return out


def remove(config: Path) -> Outcome:
    """Take out exactly this config's crontab entries and systemd units; every other line stays as it was."""
    units = our_units(config)
    outcome = Outcome()
    try:
        old = read_crontab()
    except ScheduleError:
        if not units or shutil.which("crontab") is not None:
            raise  # a crontab that cannot be read: change nothing at all
        old = None
    if old is not None:
        new = text.with_entries(old, config, [])
        if new != old:
            write_crontab(new)
            outcome.changed.append("crontab")
    wants = unit_dir() / "timers.target.wants"
    for path in units:
        path.unlink()
        (wants / path.name).unlink(missing_ok=True)
        outcome.changed.append(str(path))
        if path.suffix == ".timer":
            outcome.then.append(f"systemctl --user stop {path.name}")
    if units:
        outcome.then.append("systemctl --user daemon-reload")
    outcome.unchanged = not outcome.changed
    return outcome


@dataclass
class Status:
    """What is installed for a config, when it runs next and how its runs went."""

    entries: list[str] = field(default_factory=list)  # as they stand (crontab lines, unit names)
    next_run: datetime | None = None
    interval: timedelta | None = None  # the sync job's, for the staleness warning
    last: runs.Run | None = None
    last_ok: runs.Run | None = None
    log: Path | None = None
    crontab_problem: str = ""

    @property
    def every(self) -> str:
        """The sync job's interval as ``--every`` spells it; "" when nothing is scheduled."""
        return text.span(self.interval) if self.interval else ""

    @property
    def stale(self) -> bool:
        """The last pass that ran to its end is older than twice the interval: the schedule stopped running."""
        if self.interval is None or self.last is None:
            return False  # nothing scheduled, or nothing ran yet to judge by
        limit = datetime.now().astimezone() - 2 * self.interval
        return self.last_ok is None or self.last_ok.when < limit

    def to_json(self) -> dict[str, Any]:
        """``schedule status --json``: what the lines say, the times in ISO 8601, absent ones null."""

        def run(found: runs.Run | None) -> dict[str, Any] | None:
            if found is None:
                return None
            return {"at": found.at, "kind": found.kind, "exit_code": found.exit_code, "summary": found.summary}

        return {
            "entries": self.entries,
            "every": self.every or None,
            "next_run": self.next_run.isoformat(timespec="minutes") if self.next_run else None,
            "last_run": run(self.last),
            "last_ok": run(self.last_ok),
            "stale": self.stale,
            "log": str(self.log) if self.log else None,
            "crontab_problem": self.crontab_problem or None,
        }


def status(config: Path, cfg: Config | None) -> Status:
    """The schedule of ``config``; a missing or unreadable crontab is told in ``crontab_problem``, not raised."""
    found = Status(log=log_path(config))
    if cfg is not None:
        found.last, found.last_ok = runs.last(cfg.state_dir), runs.last_ok(cfg.state_dir)
    now = datetime.now()
    times: list[datetime] = []
    try:
        for entry in text.find(read_crontab() or "", config):
            found.entries.append(entry.line or f"(marker without its line) {entry.spec}")
            fields = entry.cron_fields
            when = text.next_run(fields, now) if fields else None
            times += [when] if when else []
            if entry.job == "sync":
                found.interval = _interval(entry.spec)
    except ScheduleError as exc:
        found.crontab_problem = str(exc)
    for path in our_units(config):
        if path.suffix == ".timer":
            marker = text.marker_of(_read(path) or "")
            assert marker is not None
            found.entries.append(f"systemd: {path}")
            timing = text.timing_of(marker.spec)
            when = text.next_run(timing.cron, now)
            times += [when] if when else []
            if marker.job == "sync":
                found.interval = _interval(marker.spec)
    found.next_run = min(times) if times else None
    return found


def _interval(spec: str) -> timedelta | None:
    try:
        return text.timing_of(spec).interval
    except (text.TimingError, ValueError):
        return None


def write_log(config: Path, exit_code: int, output: str) -> None:
    """One line per scheduled run (its exit code and the output's last line, the pass's summary), with the rest of
    the output beneath it, indented, when there is more: a run with nothing to do is exactly one line. Every line
    starts with the run's time, so ``grep`` on a warning still says when it was seen.

    The log is rotated by size (``append_log``: 1 MB, three old ones kept), so an unattended install cannot fill
    the disk however long it runs.
    """
    path = log_path(config)
    stamp = datetime.now().astimezone().isoformat(timespec="seconds")
    said = [line.rstrip() for line in output.splitlines() if line.strip()]
    lines = [f"{stamp} exit {exit_code}: {said[-1] if said else 'no output'}\n"]
    lines += [f"{stamp}     {line}\n" for line in said[:-1]]
    append_log(path, lines)
