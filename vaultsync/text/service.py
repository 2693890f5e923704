"""The text of the service that keeps ``vaultsync serve`` running for one config: a systemd user unit, a launchd
agent's property list, a crontab ``@reboot`` entry, and edits of a crontab's text that leave every other line.

Pure: nothing runs and nothing is read here, so every text is tested as a value (and the unit by
``systemd-analyze verify``). Each text starts with, or is led by, a marker naming the service's mode and the
config, so ``status`` and ``remove`` find exactly this config's service, and ``schedule install`` can see that
the service owns the hourly pass (mode ``watch``).
"""

from __future__ import annotations

import plistlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from vaultsync.text.schedule import config_id, systemd_word

MARK = "# vaultsync service"
_MARKER = re.compile(r"^# vaultsync service (serve|watch) (.+)$")
RESTART_SECONDS = 5  # systemd and launchd start it again this long after it stopped on a failure


@dataclass(frozen=True)
class ServiceEntry:
    """One config's service: what it runs (``vaultsync service run ...``, absolute), with which PATH, and where
    its output goes when the service manager holds it."""

    config: Path  # absolute
    argv: tuple[str, ...]
    path_env: str
    watch: bool  # it also watches and owns the hourly pass
    log: Path

    @property
    def mode(self) -> str:
        return "watch" if self.watch else "serve"

    @property
    def marker(self) -> str:
        return f"{MARK} {self.mode} {self.config}"


@dataclass(frozen=True)
class Marked:
    mode: str
    config: str


def unit_name(config: Path) -> str:
    return f"vaultsync-service-{config_id(config)}"


def launchd_label(config: Path) -> str:
    return f"vaultsync.service.{config_id(config)}"


def systemd_unit(entry: ServiceEntry) -> str:
    """A user unit: restarted on failure (not after a clean stop), started with the user's session, and, when
    lingering is on for the user, at boot."""
    what = "serve and watch" if entry.watch else "serve"
    description = f"vaultsync {what} for {entry.config}".replace("%", "%%")
    return (
        f"{entry.marker}\n[Unit]\nDescription={description}\n\n"
        f"[Service]\nType=simple\nEnvironment={systemd_word('PATH=' + entry.path_env)}\n"
        f"ExecStart={' '.join(systemd_word(arg) for arg in entry.argv)}\n"
        f"Restart=on-failure\nRestartSec={RESTART_SECONDS}\nTimeoutStopSec=20\n\n"
        "[Install]\nWantedBy=default.target\n"
    )


def launchd_plist(entry: ServiceEntry) -> bytes:
    """A launch agent: started at login, started again when it exits with a failure, its own output to the log
    file (vaultsync's rotated log holds the children's)."""
    plist = {
        "Label": launchd_label(entry.config),
        "Comment": entry.marker,
        "ProgramArguments": list(entry.argv),
        "EnvironmentVariables": {"PATH": entry.path_env},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": RESTART_SECONDS,
        "StandardOutPath": str(entry.log),
        "StandardErrorPath": str(entry.log),
    }
    return plistlib.dumps(plist, sort_keys=True)


def cron_block(entry: ServiceEntry) -> str:
    """The marker and an ``@reboot`` line: cron starts the service at boot; its output is in vaultsync's log, so
    cron mails nothing."""
    command = " ".join(shlex.quote(arg) for arg in entry.argv)
    line = f"@reboot PATH={shlex.quote(entry.path_env)} {command} >/dev/null 2>&1".replace("%", "\\%")
    return f"{entry.marker}\n{line}\n"


def marker_of(text: str) -> Marked | None:
    """The marker a unit file or plist comment starts with, or None for a file vaultsync did not write."""
    for line in text.splitlines()[:1] or [""]:
        found = _MARKER.match(line)
        if found:
            return Marked(found[1], found[2])
    return None


def plist_marker(data: bytes) -> Marked | None:
    try:
        comment = plistlib.loads(data).get("Comment", "")
    except (plistlib.InvalidFileException, ValueError, AttributeError):
        return None
    return marker_of(comment) if isinstance(comment, str) else None


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def find_cron(text: str, config: Path) -> Marked | None:
    """This config's service entry in a crontab's text."""
    for line in _lines(text):
        found = _MARKER.match(line.rstrip("\n"))
        if found and found[2] == str(config):
            return Marked(found[1], found[2])
    return None


def with_cron_entry(text: str, config: Path, block: str | None) -> str:
    """``text`` with this config's service entry replaced by ``block`` (None: removed); every other line keeps
    its bytes, and installing what is there gives ``text`` back."""
    lines = _lines(text)
    out: list[str] = []
    placed = False
    skip_next = False
    for line in lines:
        if skip_next:
            skip_next = False
            if line.strip().startswith("@reboot") and shlex.quote(str(config)).replace("%", "\\%") in line:
                continue
        found = _MARKER.match(line.rstrip("\n"))
        if found and found[2] == str(config):
            skip_next = True
            if block and not placed:
                out.append(block)
            placed = True
            continue
        out.append(line)
    if block and not placed:
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out.append(block)
    return "".join(out)
