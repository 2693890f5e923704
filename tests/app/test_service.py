"""``vaultsync service``: the unit it writes is one systemd accepts (``systemd-analyze verify``), the launchd agent
a valid property list with the keys that restart it, the cron entry an ``@reboot`` line beside the person's own;
``service run`` keeps ``serve`` up (a killed child is started again, the rotated log and the state say so) and
stops cleanly; ``status`` says up, since when and the last error; and the schedule and the service never both
own the hourly pass.
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.server import TOKEN, free_port
from helpers.twoway import Env

from vaultsync.app.service_units import installed, state_path
from vaultsync.system.supervisor import State
from vaultsync.text import service as text

CRONTAB = shutil.which("crontab")


@pytest.fixture
def home(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME for unit files, state and logs, seen by this process (platformdirs) and every child."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "VAULTSYNC_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VAULTSYNC_TOKEN", TOKEN)
    return home


def _vs(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def saved_crontab() -> Iterator[None]:
    """The real crontab, put back as it was after the test (these tests run the real ``crontab``)."""
    if CRONTAB is None:
        pytest.skip("no crontab command (CI installs cron)")
    before = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    try:
        yield
    finally:
        if before.returncode == 0:
            subprocess.run(["crontab", "-"], input=before.stdout, text=True, check=True)
        else:
            subprocess.run(["crontab", "-r"], capture_output=True, check=False)


def _crontab() -> str:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def test_the_systemd_unit_is_one_systemd_accepts(env: Env, home: Path, tmp_path: Path) -> None:
    done = _vs("service", "install", "--manager", "systemd", "--config", str(env.config_path))

    assert done.returncode == 0, done.stderr
    [unit] = (home / ".config/systemd/user").glob("vaultsync-service-*.service")
    body = unit.read_text(encoding="utf-8")
    assert f"service run --config {env.config_path}" in body
    assert "Restart=on-failure" in body and "WantedBy=default.target" in body
    assert installed(env.config_path)[0].manager == "systemd"
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here: the unit's text was checked above")
    verified = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False)
    assert verified.returncode == 0, verified.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(body.replace("Restart=on-failure", "Restart=sometimes").replace("ExecStart=/", "ExecStart="))
    refused = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True, text=True, check=False)
    assert refused.returncode != 0, "systemd-analyze accepted a broken unit: the check above proves nothing"


def test_the_launchd_agent_restarts_on_failure_and_logs(env: Env, home: Path) -> None:
    done = _vs("service", "install", "--manager", "launchd", "--watch", "--config", str(env.config_path))

    assert done.returncode == 0, done.stderr
    [plist] = (home / "Library/LaunchAgents").glob("vaultsync.service.*.plist")
    agent = plistlib.loads(plist.read_bytes())
    assert agent["Label"] == plist.stem
    assert agent["ProgramArguments"][-7:] == [
        "service",
        "run",
        "--config",
        str(env.config_path),
        "--watch",
        "--every",
        "1h",
    ]
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    assert agent["StandardErrorPath"].endswith("-service.log")
    assert text.plist_marker(plist.read_bytes()) == text.Marked("watch", str(env.config_path))
    if shutil.which("plutil"):
        assert subprocess.run(["plutil", "-lint", str(plist)], capture_output=True, check=False).returncode == 0


def _wait(what: str, check: object, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds  # waiting for a process to start, not a measurement
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.1)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _state(env: Env) -> State | None:
    return State.read(state_path(env.config_path))


def test_service_run_keeps_serve_up_and_status_says_so(env: Env, home: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vaultsync.cli",
            "service",
            "run",
            "--port",
            str(port),
            "--config",
            str(env.config_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait("serve answers", lambda: _answers(url))
        first = _state(env)
        assert first is not None and first.children["serve"].pid
        status = _vs("service", "status", "--config", str(env.config_path))
        assert f"up: yes, since {first.children['serve'].since}" in status.stdout, status.stdout
        assert "last error: none" in status.stdout

        os.kill(first.children["serve"].pid, signal.SIGKILL)
        _wait("serve restarted", lambda: (s := _state(env)) is not None and s.children["serve"].restarts == 1)
        _wait("serve answers again", lambda: _answers(url))
        again = _state(env)
        assert again is not None and again.children["serve"].pid != first.children["serve"].pid
        status = _vs("service", "status", "--json", "--config", str(env.config_path))
        found = json.loads(status.stdout)
        assert found["up"] is True and found["last_error"].startswith("exit -9")
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert not _answers(url)
    log = next((home / ".local/state/vaultsync/log").glob("*-service.log")).read_text(encoding="utf-8")
    assert "serve: started" in log and "stopped with exit -9; starting again" in log and "service: stopped" in log
    after = _vs("service", "status", "--config", str(env.config_path))
    assert "up: no" in after.stdout and "last error: exit -9" in after.stdout


def test_a_broken_token_is_the_last_error_while_it_keeps_trying(
    env: Env, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VAULTSYNC_TOKEN", "short")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vaultsync.cli",
            "service",
            "run",
            "--port",
            str(free_port()),
            "--config",
            str(env.config_path),
        ],
    )
    try:
        _wait("serve failed once", lambda: (s := _state(env)) is not None and s.children["serve"].restarts >= 1)
        status = _vs("service", "status", "--config", str(env.config_path))
        assert "up: no" in status.stdout and "VAULTSYNC_TOKEN is shorter than 32" in status.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def test_cron_reboot_entry_starts_now_and_keeps_the_persons_lines(env: Env, home: Path, saved_crontab: None) -> None:
    subprocess.run(["crontab", "-"], input="MAILTO=me@example.invalid\n5 4 * * * echo mine\n", text=True, check=True)

    done = _vs("service", "install", "--manager", "cron", "--port", str(free_port()), "--config", str(env.config_path))

    assert done.returncode == 0, done.stderr
    table = _crontab()
    assert table.startswith("MAILTO=me@example.invalid\n5 4 * * * echo mine\n")
    assert f"# vaultsync service serve {env.config_path}\n@reboot " in table
    _wait("the service started now", lambda: (s := _state(env)) is not None and bool(s.children["serve"].pid))
    again = _vs("service", "install", "--manager", "cron", "--config", str(env.config_path))
    assert again.returncode == 0
    removed = _vs("service", "remove", "--config", str(env.config_path))
    assert removed.returncode == 0 and "stopped the running service" in removed.stdout, removed.stdout
    assert _crontab() == "MAILTO=me@example.invalid\n5 4 * * * echo mine\n"


def test_the_schedule_and_a_watching_service_never_both_run_the_hourly_pass(
    env: Env, home: Path, saved_crontab: None
) -> None:
    config = str(env.config_path)
    assert _vs("schedule", "install", "--config", config).returncode == 0
    assert f"# vaultsync schedule sync every=1h {config}" in _crontab()

    took = _vs("service", "install", "--watch", "--manager", "systemd", "--config", config)
    assert took.returncode == 0, took.stderr
    assert "hourly pass was taken out" in took.stdout
    table = _crontab()
    assert f"schedule sync every=1h {config}" not in table
    assert f"schedule janitor daily=20:00 {config}" in table and f"schedule review weekly=sun-03:00 {config}" in table

    again = _vs("schedule", "install", "--config", config)
    assert again.returncode == 0 and "the hourly pass is left out" in again.stdout
    assert f"schedule sync every=1h {config}" not in _crontab()

    removed = _vs("service", "remove", "--config", config)
    assert "vaultsync schedule install" in removed.stdout
    assert _vs("schedule", "install", "--config", config).returncode == 0
    assert f"schedule sync every=1h {config}" in _crontab()
    _vs("schedule", "remove", "--config", config)


def test_a_systemd_timer_for_the_pass_gives_way_to_a_watching_service(env: Env, home: Path) -> None:
    config = str(env.config_path)
    assert _vs("schedule", "install", "--systemd", "--config", config).returncode == 0
    units = home / ".config/systemd/user"
    assert list(units.glob("vaultsync-sync-*.timer"))

    assert _vs("service", "install", "--watch", "--manager", "systemd", "--config", config).returncode == 0

    assert not list(units.glob("vaultsync-sync-*")), "the schedule's sync timer is left beside the service"
    assert list(units.glob("vaultsync-janitor-*.timer")) and list(units.glob("vaultsync-service-*.service"))


@pytest.mark.skipif(
    not Path("/run/systemd/system").is_dir()
    or subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True, check=False).returncode != 0,
    reason="no systemd user manager on this machine: the unit's text and systemd-analyze are checked above",
)
def test_with_a_real_systemd_user_manager(env: Env) -> None:
    config = str(env.config_path)
    done = _vs("service", "install", "--port", str(free_port()), "--config", config)
    try:
        assert done.returncode == 0 and "started (systemd)" in done.stdout, done.stdout + done.stderr
        _wait("up", lambda: "up: yes" in _vs("service", "status", "--config", config).stdout)
    finally:
        assert _vs("service", "remove", "--config", config).returncode == 0
