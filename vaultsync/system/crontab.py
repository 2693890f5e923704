"""The user's crontab, through the real ``crontab`` command (the only supported way to change it): read whole,
written whole. Editing its text is ``text/``'s; deciding what goes in, the schedule's and the service's."""

from __future__ import annotations

import shutil
import subprocess

from vaultsync.errors import ScheduleError

NO_CRONTAB = (
    "no `crontab` command on this machine; install cron (Debian, Ubuntu: apt-get install cron; "
    "Fedora: dnf install cronie), or use --systemd"
)


def _crontab(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("crontab") is None:
        raise ScheduleError(NO_CRONTAB)
    return subprocess.run(["crontab", *args], input=stdin, capture_output=True, text=True, check=False)


def read_crontab() -> str | None:
    """The user's crontab, or None when there is none yet."""
    done = _crontab("-l")
    if done.returncode == 0:
        return done.stdout
    if "no crontab for" in done.stderr:
        return None
    raise ScheduleError(f"cannot read the crontab ({done.stderr.strip() or f'crontab -l exit {done.returncode}'})")


def write_crontab(new: str) -> None:
    done = _crontab("-r") if not new else _crontab("-", stdin=new)
    if done.returncode != 0:
        raise ScheduleError(f"cannot write the crontab: {done.stderr.strip()}")


def has_crontab() -> bool:
    return shutil.which("crontab") is not None
