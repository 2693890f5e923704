"""The service use case: install, show and remove what keeps ``vaultsync serve`` (and, when chosen, the watch and
the hourly pass) running for one config, and ``run``, what the installed service starts.

One command runs under every manager: ``vaultsync service run``, which supervises the children itself
(``system/supervisor.py``: restarts, the rotated log, the state file ``status`` reads). The manager only starts it
at login or boot and starts it again if it fails: a systemd user unit on Linux, a launchd agent on macOS, a crontab
``@reboot`` entry where neither is (started now as well, since cron waits for the next boot), or, with none of
those, the command to add to the session's startup. With ``--watch`` the service owns the hourly pass: the
schedule's sync job is taken out (its janitor and review stay), and ``schedule install`` leaves it out while
such a service is installed.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.app import schedule
from vaultsync.app.service_units import (
    Installed,
    installed,
    log_path,
    plist_path,
    state_path,
    systemd_unit_path,
    unit_dir,
)
from vaultsync.config import load
from vaultsync.errors import ScheduleError
from vaultsync.system import services, supervisor
from vaultsync.system.crontab import has_crontab, read_crontab, write_crontab
from vaultsync.text import service as text

MANAGERS = ("systemd", "launchd", "cron", "manual")
DEFAULT_PORT = 8765
START_WAIT = 30.0  # seconds install waits for the started service's API to answer
STOP_WAIT = 30.0  # seconds a supervisor gets to stop its children and write its state, before a new one starts


def default_manager() -> str:
    """The platform's own manager: launchd on macOS, systemd where it runs, else cron, else a manual step."""
    if sys.platform == "darwin":
        return "launchd"
    if services.systemd_present():
        return "systemd"
    return "cron" if has_crontab() else "manual"


def entry(config: Path, watch: bool, every: str, port: int = DEFAULT_PORT) -> text.ServiceEntry:
    command = schedule.launcher()
    argv = (*command, "service", "run", "--config", str(config))
    argv += ("--port", str(port)) if port != DEFAULT_PORT else ()
    argv += ("--watch", "--every", every) if watch else ()
    return text.ServiceEntry(config, argv, schedule.path_env(command), watch, log_path(config))


@dataclass
class ServiceOutcome:
    manager: str
    changed: list[str] = field(default_factory=list)  # files written or removed, or "crontab"
    command: str = ""  # what the service runs
    started: bool = False  # running now (started, or restarted after a change)
    then: list[str] = field(default_factory=list)  # commands the person runs to finish
    notes: list[str] = field(default_factory=list)
    log: Path | None = None
    answering: str = ""  # the API's address, once it answered after the start

    @property
    def unchanged(self) -> bool:
        return not self.changed and not self.started


def install(
    config: Path, watch: bool = False, every: str = "1h", manager: str | None = None, port: int = DEFAULT_PORT
) -> ServiceOutcome:
    """Write the service for ``config`` and start it where the manager answers; idempotent."""
    load(config)  # a config that does not load would only make a service that fails forever
    schedule.every_checked(every)
    manager = manager or default_manager()
    if manager not in MANAGERS:
        raise ScheduleError(f"--manager {manager}: use one of {', '.join(MANAGERS)}")
    unit = entry(config, watch, every, port)
    outcome = ServiceOutcome(manager, command=shlex.join(unit.argv), log=unit.log)
    for other in installed(config):
        if other.manager != manager:
            outcome.changed += _uninstall(config, other, outcome)
    {"systemd": _systemd, "launchd": _launchd, "cron": _cron, "manual": _manual}[manager](unit, outcome)
    if outcome.started:
        outcome.answering = _answers(port)
        if not outcome.answering:
            outcome.notes.append("serve does not answer yet; see `vaultsync service status` and the log")
    if watch:
        dropped = schedule.drop_sync(config)
        if dropped:
            outcome.changed += dropped
            outcome.notes.append("the schedule's hourly pass was taken out: the service runs it now")
    elif any(i.mode == "watch" for i in installed(config)):
        outcome.notes.append("the hourly pass is the schedule's again: run `vaultsync schedule install`")
    return outcome


def _answers(port: int) -> str:
    """The API's address once it answers (a person runs doctor or opens Obsidian next), or "" after
    ``START_WAIT`` seconds of trying."""
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if services.http_get(f"{url}/health", timeout=2).code == 200:
            return url
        time.sleep(0.25)
    return ""


def _write(path: Path, data: bytes, outcome: ServiceOutcome) -> bool:
    try:
        same = path.read_bytes() == data
    except OSError:
        same = False
    if not same:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        outcome.changed.append(str(path))
    return not same


def _systemd(unit: text.ServiceEntry, outcome: ServiceOutcome) -> None:
    path = systemd_unit_path(unit.config)
    changed = _write(path, text.systemd_unit(unit).encode(), outcome)
    name = path.name
    steps = [("daemon-reload",), ("enable", "--now", name)] + ([("restart", name)] if changed else [])
    if services.user_manager_up():
        for step in steps:
            said = services.systemctl(*step)
            if not said.ok:
                raise ScheduleError(f"systemctl --user {' '.join(step)} failed: {said.out}")
        outcome.started = True
    else:
        outcome.then = ["systemctl --user daemon-reload", f"systemctl --user enable --now {name}"]
        outcome.notes.append(
            "no systemd user manager answers here (no login session?): run the commands above in your session"
        )
    outcome.notes.append("to keep it running while you are logged out: loginctl enable-linger $USER")


def _launchd(unit: text.ServiceEntry, outcome: ServiceOutcome) -> None:
    path = plist_path(unit.config)
    changed = _write(path, text.launchd_plist(unit), outcome)
    target = f"{services.launchd_domain()}/{text.launchd_label(unit.config)}"
    if services.launchd_present():
        if changed:
            services.launchctl("bootout", target)  # not loaded yet is fine
        said = services.launchctl("bootstrap", services.launchd_domain(), str(path))
        outcome.started = said.ok or "already" in said.out.lower()
        if not outcome.started:
            raise ScheduleError(f"launchctl bootstrap failed: {said.out}")
    else:
        outcome.then = [f"launchctl bootstrap {services.launchd_domain()} {shlex.quote(str(path))}"]


def _cron(unit: text.ServiceEntry, outcome: ServiceOutcome) -> None:
    old = read_crontab() or ""
    new = text.with_cron_entry(old, unit.config, text.cron_block(unit))
    if new != old:
        write_crontab(new)
        outcome.changed.append("crontab")
    state = supervisor.State.read(state_path(unit.config))
    running = state is not None and supervisor.alive(state.pid) and not state.stopped
    if running and new != old and state is not None:
        supervisor.stop(state.pid, wait=STOP_WAIT)
        running = False
    if not running:
        supervisor.spawn_detached(unit.argv)
        outcome.started = True
    outcome.notes.append("cron starts it at every boot (@reboot); it was started now too")


def _manual(unit: text.ServiceEntry, outcome: ServiceOutcome) -> None:
    outcome.then = [f"{shlex.join(unit.argv)} &"]
    outcome.notes.append(
        "no systemd, launchd or cron here: add the command above to what your session starts at login "
        "(docs/cli.md: vaultsync service)"
    )


def _uninstall(config: Path, unit: Installed, outcome: ServiceOutcome) -> list[str]:
    """Stop and take out one manager's service; what was removed."""
    if unit.manager == "systemd":
        path = systemd_unit_path(config)
        if services.user_manager_up():
            services.systemctl("disable", "--now", path.name)
            services.systemctl("daemon-reload")
        else:
            outcome.then += [f"systemctl --user disable --now {path.name}", "systemctl --user daemon-reload"]
        path.unlink(missing_ok=True)
        (unit_dir() / "default.target.wants" / path.name).unlink(missing_ok=True)
        return [str(path)]
    if unit.manager == "launchd":
        path = plist_path(config)
        if services.launchd_present():
            services.launchctl("bootout", f"{services.launchd_domain()}/{text.launchd_label(config)}")
        path.unlink(missing_ok=True)
        return [str(path)]
    old = read_crontab() or ""
    write_crontab(text.with_cron_entry(old, config, None))
    return ["crontab"]


def remove(config: Path) -> ServiceOutcome:
    """Stop this config's service and take out exactly what was installed for it."""
    found = installed(config)
    outcome = ServiceOutcome(found[0].manager if found else "", log=log_path(config))
    for unit in found:
        outcome.changed += _uninstall(config, unit, outcome)
    state = supervisor.State.read(state_path(config))
    if state is not None and supervisor.stop(state.pid, wait=STOP_WAIT):
        outcome.notes.append(f"stopped the running service (pid {state.pid})")
    if any(unit.mode == "watch" for unit in found):
        outcome.notes.append("the service ran the hourly pass: run `vaultsync schedule install` to schedule it again")
    return outcome


def restart(config: Path) -> ServiceOutcome:
    """Stop and start the installed service (after a new token, a changed config): through its manager, or, for
    cron and a manual start, by stopping the running supervisor and starting its command again."""
    found = installed(config)
    state = supervisor.State.read(state_path(config))
    outcome = ServiceOutcome(found[0].manager if found else "manual", log=log_path(config))
    if found and found[0].manager == "systemd":
        name = systemd_unit_path(config).name
        if not services.user_manager_up():
            outcome.then = [f"systemctl --user restart {name}"]
            return outcome
        said = services.systemctl("restart", name)
        if not said.ok:
            raise ScheduleError(f"systemctl --user restart {name} failed: {said.out}")
    elif found and found[0].manager == "launchd":
        label = f"{services.launchd_domain()}/{text.launchd_label(config)}"
        if not services.launchd_present():
            outcome.then = [f"launchctl kickstart -k {label}"]
            return outcome
        services.launchctl("kickstart", "-k", label)
    elif state is not None and state.argv:
        supervisor.stop(state.pid, wait=STOP_WAIT)
        supervisor.spawn_detached(state.argv)
    else:
        raise ScheduleError(f"no service installed or running for {config}; run `vaultsync service install`")
    outcome.started = True
    return outcome


@dataclass
class ServiceStatus:
    installed: list[Installed]
    up: bool = False
    pid: int | None = None
    since: str | None = None
    children: dict[str, supervisor.ChildState] = field(default_factory=dict)
    last_error: str = ""
    last_error_at: str | None = None
    manager_says: str = ""
    log: Path | None = None


def status(config: Path) -> ServiceStatus:
    """Whether the service is up (its supervisor and ``serve`` both running), since when, and its last error."""
    found = ServiceStatus(installed(config), log=log_path(config))
    state = supervisor.State.read(state_path(config))
    if state is not None:
        found.children = state.children
        running = supervisor.alive(state.pid) and not state.stopped
        serve = state.children.get("serve")
        found.up = running and serve is not None and supervisor.alive(serve.pid)
        found.pid = state.pid if running else None
        found.since = serve.since if found.up and serve else None
        errors = [c for c in state.children.values() if c.last_error_at]
        if errors:
            latest = max(errors, key=lambda c: c.last_error_at or "")
            found.last_error, found.last_error_at = latest.last_error, latest.last_error_at
    for unit in found.installed:
        if unit.manager == "systemd" and services.user_manager_up():
            found.manager_says = "systemd: " + services.systemctl("is-active", Path(unit.where).name).out
    return found


def run(
    config: Path,
    watch: bool = False,
    every: str = "1h",
    port: int = DEFAULT_PORT,
    started: Callable[[Path], None] | None = None,
) -> int:
    """What the installed service runs: serve (and watch, and the pass every ``every``) until stopped;
    ``started`` gets the log's path once a stop request would be heard."""
    load(config)
    command = list(schedule.launcher())
    children = {"serve": [*command, "serve", "--port", str(port), "--config", str(config)]}
    periodic = None
    if watch:
        children["watch"] = [*command, "watch", "--config", str(config)]
        seconds = schedule.every_checked(every).interval.total_seconds()
        periodic = ([*command, "sync", "--scheduled", "--config", str(config)], seconds)
    itself = [*command, "service", "run", "--config", str(config), "--port", str(port)]
    itself += ["--watch", "--every", every] if watch else []
    keeper = supervisor.Supervisor(children, log_path(config), state_path(config), periodic, itself)
    return keeper.run((lambda: started(log_path(config))) if started else None)
