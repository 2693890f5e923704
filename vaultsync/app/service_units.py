"""Where a config's service lives and what is installed of it: the systemd user unit, the launchd agent, the
crontab ``@reboot`` entry, and the files the running service writes (its state and its rotated log).

Apart from ``app/service.py`` because ``schedule install`` asks it too: when the service watches (``--watch``),
it owns the hourly pass, and the schedule leaves its sync job out, so the two never run the same pass twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vaultsync.errors import ScheduleError
from vaultsync.system.crontab import has_crontab, read_crontab
from vaultsync.text import service as text
from vaultsync.text.schedule import config_id


@dataclass(frozen=True)
class Installed:
    manager: str  # systemd, launchd or cron
    where: str  # the unit file, the plist, or "crontab"
    mode: str  # serve, or watch (serve, watch and the hourly pass)


def unit_dir() -> Path:
    """Where systemd looks for the user's own units (``$XDG_CONFIG_HOME/systemd/user``)."""
    import platformdirs  # only where a path is asked for: a plain sync never loads it

    return platformdirs.user_config_path() / "systemd" / "user"


def systemd_unit_path(config: Path) -> Path:
    return unit_dir() / f"{text.unit_name(config)}.service"


def plist_path(config: Path) -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{text.launchd_label(config)}.plist"


def state_path(config: Path) -> Path:
    import platformdirs

    return platformdirs.user_state_path("vaultsync") / "service" / f"{config.stem}-{config_id(config)}.json"


def log_path(config: Path) -> Path:
    """The service's rotated log, beside the schedule's (~/.local/state/vaultsync/log on Linux)."""
    import platformdirs

    return platformdirs.user_log_path("vaultsync") / f"{config.stem}-{config_id(config)}-service.log"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def installed(config: Path) -> list[Installed]:
    """This config's service as installed, by every manager (normally one); a crontab that cannot be read counts
    as holding none."""
    found = []
    unit = _read(systemd_unit_path(config))
    marked = text.marker_of(unit.decode("utf-8", "replace")) if unit is not None else None
    if marked and marked.config == str(config):
        found.append(Installed("systemd", str(systemd_unit_path(config)), marked.mode))
    plist = _read(plist_path(config))
    marked = text.plist_marker(plist) if plist is not None else None
    if marked and marked.config == str(config):
        found.append(Installed("launchd", str(plist_path(config)), marked.mode))
    if has_crontab():
        try:
            marked = text.find_cron(read_crontab() or "", config)
        except ScheduleError:
            marked = None
        if marked:
            found.append(Installed("cron", "crontab", marked.mode))
    return found


def owns_sync(config: Path) -> bool:
    """Whether an installed service watches, and so owns the hourly pass."""
    return any(unit.mode == "watch" for unit in installed(config))
