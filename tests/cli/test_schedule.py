"""``vaultsync schedule``: entries installed and removed through the machine's real ``crontab`` command, the line run
as cron runs it, systemd units checked by ``systemd-analyze``, and the crontab edits on generated text.

Every test that touches the crontab saves ``crontab -l`` first and puts it back after, "no crontab" included.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from helpers.e2e import make_env
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.state import runs
from vaultsync.text import schedule as text

pytestmark = pytest.mark.skipif(
    shutil.which("crontab") is None, reason="needs the crontab command (.ci/run installs it)"
)

TRICKY = (
    "# my crontab   with  spaces\n"
    'MAILTO="me@example.com"\n'
    "SHELL=/bin/bash\n"
    "0  *   * * *    /usr/bin/backup --at '%H\\%M'   # aligned\n"
    "\n"
    "\t# tab comment\n"
    "@reboot   /usr/bin/thing\n"
)
AFTER = "15 3 * * 1-5 cmd   with   spaces\n# the end\n"


def _crontab_l() -> str | None:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else None


def _set_crontab(content: str | None) -> None:
    if content is None:
        subprocess.run(["crontab", "-r"], capture_output=True, check=False)
    else:
        subprocess.run(["crontab", "-"], input=content, text=True, check=True)


@pytest.fixture
def crontab() -> Iterator[None]:
    """The machine's crontab as it was before the test, restored after it whatever happened."""
    if shutil.which("crontab") is None:
        pytest.skip("needs the crontab command (.ci/run installs it)")
    saved = _crontab_l()
    try:
        yield
    finally:
        _set_crontab(saved)


def _vs(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(name, value)
    return home


def _config(root: Path) -> Path:
    """An initialised vault whose config path has a space and a ``%``, which cron and systemd treat specially."""
    env = make_env(root)
    env.config_path = root / "my 100% vault.toml"
    env.init()
    return env.config_path


def test_install_again_and_remove_leave_every_other_line(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    _set_crontab(TRICKY)
    done = _vs("schedule", "install", "--config", str(config))
    assert done.returncode == 0, done.stderr
    installed = _crontab_l()
    assert installed is not None and installed.startswith(TRICKY)
    ours = installed[len(TRICKY) :]
    assert ours.startswith(f"# vaultsync schedule sync every=1h {config}\n0 * * * * PATH=")
    assert "--scheduled --config '" + str(config).replace("%", "\\%") + "'" in ours

    again = _vs("schedule", "install", "--config", str(config))
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert _crontab_l() == installed

    _set_crontab(installed + AFTER)  # the user added lines after ours
    removed = _vs("schedule", "remove", "--config", str(config))
    assert removed.returncode == 0, removed.stderr
    assert _crontab_l() == TRICKY + AFTER


def test_install_with_no_crontab_and_remove_leaves_none(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    _set_crontab(None)
    assert _vs("schedule", "install", "--every", "30m", "--config", str(config)).returncode == 0
    installed = _crontab_l() or ""
    assert f"every=30m {config}\n*/30 * * * * " in installed
    assert _vs("schedule", "remove", "--config", str(config)).returncode == 0
    assert _crontab_l() is None


def test_two_configs_side_by_side(home: Path, tmp_path: Path, crontab: None) -> None:
    first, second = _config(tmp_path / "a"), _config(tmp_path / "b")
    _set_crontab(TRICKY)
    assert _vs("schedule", "install", "--config", str(first)).returncode == 0
    assert _vs("schedule", "install", "--every", "2h", "--config", str(second)).returncode == 0
    both = _crontab_l() or ""
    jobs = [job.name for job in text.JOBS]
    assert [(f.job, f.config) for f in text.find(both)] == [(j, str(c)) for c in (first, second) for j in jobs]
    assert _vs("schedule", "remove", "--config", str(first)).returncode == 0
    left = _crontab_l() or ""
    assert left == TRICKY + both[both.index(f"# vaultsync schedule sync every=2h {second}") :]
    status = _vs("schedule", "status", "--config", str(second))
    assert status.returncode == 0 and "0 */2 * * *" in status.stdout and "next run: " in status.stdout


def _as_cron_runs(line: str) -> str:
    """The command cron hands to /bin/sh for an entry line: the time fields dropped, ``\\%`` made ``%`` again."""
    command = line.split(None, 5)[5]
    assert re.search(r"(?<!\\)%", command) is None, "a bare % would become a newline under cron"
    return command.replace("\\%", "%")


def test_the_installed_line_runs_under_crons_environment(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    vault = config.parent / "vault"
    _set_crontab(None)
    assert _vs("schedule", "install", "--config", str(config)).returncode == 0
    line = (_crontab_l() or "").splitlines()[1]
    cron_env = ["env", "-i", "SHELL=/bin/sh", "PATH=/usr/bin:/bin", f"HOME={home}", "LOGNAME=root"]
    for _ in range(2):  # the first pass renders the example; the second finds nothing to do
        done = subprocess.run([*cron_env, "/bin/sh", "-c", _as_cron_runs(line)], cwd=home, capture_output=True)
        assert done.returncode == 0, done
        assert done.stdout == b"" and done.stderr == b""  # all of it went to the log
    assert (vault / "2 Areas/people/sarah-chen/sarah-chen.md").is_file()
    logs = list((home / ".local/state/vaultsync/log").glob("*.log"))
    assert len(logs) == 1
    log = logs[0].read_text(encoding="utf-8").splitlines()
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d exit 0: wrote \d+ file\(s\), \d+ commit", log[0])
    assert re.match(r"^\S+ exit 0: wrote 0 file\(s\), nothing to commit$", log[-1])  # a quiet hour: one line
    recorded = runs.history(vault / ".vaultsync")
    assert [(r.kind, r.exit_code) for r in recorded] == [("scheduled", 0), ("scheduled", 0)]
    status = _vs("status", "--config", str(config))
    assert "next run: " in status.stdout and "(scheduled) exit 0: wrote 0 file(s), nothing to commit" in status.stdout


def test_status_warns_when_the_last_pass_is_older_than_twice_the_interval(
    home: Path, tmp_path: Path, crontab: None
) -> None:
    config = _config(tmp_path / "a")
    state = config.parent / "vault" / ".vaultsync"
    _set_crontab(None)
    assert _vs("schedule", "install", "--config", str(config)).returncode == 0
    old = (datetime.now().astimezone() - timedelta(hours=3)).isoformat(timespec="seconds")
    runs.record(state, runs.Run(old, "scheduled", 0, "wrote 0 file(s), nothing to commit"))
    assert "warning: the last pass that ran to its end was at" in _vs("status", "--config", str(config)).stdout
    runs.record(state, runs.Run(runs.now_stamp(), "scheduled", 0, "wrote 0 file(s), nothing to commit"))
    assert "warning:" not in _vs("status", "--config", str(config)).stdout


def test_no_crontab_command_is_exit_2_and_changes_nothing(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "git")
    _set_crontab(TRICKY)
    done = _vs("schedule", "install", "--config", str(config), env={**os.environ, "PATH": str(bin_dir)})
    assert done.returncode == 2
    assert "no `crontab` command" in done.stderr and "install cron" in done.stderr
    assert _crontab_l() == TRICKY


def test_an_unreadable_crontab_is_exit_2_and_changes_nothing(home: Path, tmp_path: Path, crontab: None) -> None:
    # Root may read every crontab, so the refusal a user meets in /etc/cron.deny comes from a stand-in command.
    config = _config(tmp_path / "a")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "git")
    stand_in = bin_dir / "crontab"
    stand_in.write_text("#!/bin/sh\necho 'You (nora) are not allowed to use this program (crontab)' >&2\nexit 1\n")
    stand_in.chmod(0o755)
    _set_crontab(TRICKY)
    for action in ("install", "remove"):
        done = _vs("schedule", action, "--config", str(config), env={**os.environ, "PATH": str(bin_dir)})
        assert done.returncode == 2 and "cannot read the crontab (You (nora) are not allowed" in done.stderr
    assert _crontab_l() == TRICKY


def test_an_interval_cron_cannot_keep_is_refused(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    _set_crontab(None)
    done = _vs("schedule", "install", "--every", "7m", "--config", str(config))
    assert done.returncode == 2 and "minutes that divide an hour" in done.stderr
    assert _crontab_l() is None


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_units_pass_systemd_analyze(home: Path, tmp_path: Path) -> None:
    config = _config(tmp_path / "a")
    done = _vs("schedule", "install", "--systemd", "--every", "15m", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert (
        "systemctl --user daemon-reload" in done.stdout
        and "systemctl --user enable --now vaultsync-sync-" in done.stdout
    )
    units = sorted((home / ".config/systemd/user").iterdir())
    assert [p.suffix for p in units] == [".service", ".timer"] * len(text.JOBS)
    timers = {p.name: p.read_text() for p in units if p.suffix == ".timer"}
    assert next(t for name, t in timers.items() if "-sync-" in name).count("OnCalendar=*-*-* *:00/15:00\n") == 1
    assert any("OnCalendar=*-*-* 20:00:00\n" in t for t in timers.values()), "no janitor timer at 20:00"
    assert any("OnCalendar=Sun *-*-* 03:00:00\n" in t for t in timers.values()), "no review timer on Sunday 03:00"
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    with_runtime = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    verify = ["systemd-analyze", "verify", *map(str, units)]
    checked = subprocess.run(verify, capture_output=True, text=True, env=with_runtime, check=False)
    assert checked.returncode == 0, checked.stderr
    broken = tmp_path / "broken.service"
    broken.write_text("[Service]\nExecStart=vaultsync-not-an-absolute-path\nBogus=1\n")
    refused = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True, env=with_runtime)
    assert refused.returncode != 0  # the check above is a real one
    assert _vs("schedule", "install", "--systemd", "--every", "15m", "--config", str(config)).stdout.startswith(
        "already installed"
    )
    removed = _vs("schedule", "remove", "--config", str(config))
    assert removed.returncode == 0, removed.stderr
    assert not list((home / ".config/systemd/user").glob("vaultsync-*"))


# -- the crontab edits on generated text ---------------------------------------------------------------------

CONFIG = Path("/home/nora/.config/vaultsync/my 100% config.toml")
_line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=40)
_crontabs = st.lists(
    st.one_of(
        _line,
        st.sampled_from(['MAILTO="a@b"', "0  *  * * *   echo \\%x  # c", "\t# tab", "", "# vaultsync schedule"]),
        st.just("# vaultsync schedule sync every=1h /other/config.toml\n0 * * * * x --config /other/config.toml"),
    ),
    max_size=12,
).map(lambda lines: "".join(line + "\n" for line in lines))


def _block(every: str = "1h") -> list[str]:
    entries = text.entries(text.JOBS, text.every(every), CONFIG, ("/usr/bin/vaultsync",), "/usr/bin:/bin")
    return [text.cron_block(entry) for entry in entries]


@given(_crontabs, _crontabs, st.sampled_from(["5m", "30m", "1h", "6h", "1d"]))
@settings(max_examples=300)
def test_install_and_remove_round_trip_any_crontab(before: str, after: str, every: str) -> None:
    installed = text.with_entries(before, CONFIG, _block(every))
    assert installed.startswith(before) and installed.endswith("".join(_block(every)))
    assert text.with_entries(installed, CONFIG, _block(every)) == installed
    assert [f.config for f in text.find(installed, CONFIG)] == [str(CONFIG)] * len(text.JOBS)
    assert text.with_entries(installed, CONFIG, []) == before
    edited = installed + after  # lines the user added after ours stay where they are
    assert text.with_entries(edited, CONFIG, []) == before + after
    assert text.with_entries(edited, CONFIG, _block("15m")) == before + "".join(_block("15m")) + after


@given(st.sampled_from([*(f"{m}m" for m in text.MINUTE_STEPS), *(f"{h}h" for h in text.HOUR_STEPS), "1d"]))
def test_next_run_is_within_one_interval(every: str) -> None:
    timing = text.every(every)
    now = datetime(2026, 3, 7, 13, 7, 30)
    when = text.next_run(timing.cron, now)
    assert when is not None and now < when <= now + timing.interval
    assert text.timing_of(timing.spec) == timing


def test_python_crontab_would_rewrite_lines_it_did_not_write() -> None:
    # Why the crontab is edited as text here: if a later python-crontab keeps these lines, reconsider.
    crontab_module = pytest.importorskip("crontab")
    assert crontab_module.CronTab(tab=TRICKY).render() != TRICKY


def test_status_json_is_one_document_and_its_failure_an_error_object(home: Path, tmp_path: Path, crontab: None) -> None:
    config = _config(tmp_path / "a")
    _set_crontab(None)
    assert _vs("schedule", "install", "--every", "30m", "--config", str(config)).returncode == 0
    done = _vs("schedule", "status", "--json", "--config", str(config))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["every"] == "30m" and found["stale"] is False and found["last_run"] is None
    assert len(found["entries"]) == len(text.JOBS) and all(
        str(config).replace("%", "\\%") in e for e in found["entries"]
    )
    assert datetime.fromisoformat(found["next_run"]) - datetime.now() <= timedelta(minutes=31)
    assert found["log"].endswith(".log") and found["crontab_problem"] is None

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "git")
    stand_in = bin_dir / "crontab"
    stand_in.write_text("#!/bin/sh\necho 'You (nora) are not allowed to use this program (crontab)' >&2\nexit 1\n")
    stand_in.chmod(0o755)
    refused = _vs("schedule", "status", "-j", "--config", str(config), env={**os.environ, "PATH": str(bin_dir)})
    assert refused.returncode == 2
    error = json.loads(refused.stdout)
    assert error["kind"] == "schedule" and "cannot read the crontab (You (nora)" in error["message"]
    assert error["exit_code"] == 2 and "cannot read the crontab" in refused.stderr
