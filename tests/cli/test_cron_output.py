"""What the command line writes when nobody watches it: ``--quiet`` prints only problems and conflicts, each
line with its time, and every line of the scheduled run's log says when it was seen. The real program runs in a
subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers.e2e import run_vaultsync
from helpers.twoway import SARAH, SARAH_DIR, Env, set_prop

from vaultsync.model import ExitCode


def test_quiet_prints_only_problems_and_conflicts_with_timestamps(env: Env) -> None:
    done = run_vaultsync("sync", "--quiet", "--config", str(env.config_path))
    assert done.returncode == ExitCode.CLEAN and done.stdout == "" and done.stderr == ""
    set_prop(env.fact_note(SARAH_DIR, "sarah-chen-001"), "category", "work")
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="career"))
    done = run_vaultsync("sync", "--quiet", "--config", str(env.config_path))
    assert done.returncode == ExitCode.CONFLICTS
    lines = done.stdout.splitlines()
    assert lines and all(line[:4].isdigit() and line[10] == "T" for line in lines), lines
    assert any(" conflict: " in line and ".vaultsync-conflict-" in line for line in lines)
    assert not any("wrote" in line or "changes" in line for line in lines)


def test_every_line_of_the_scheduled_log_has_the_time(tmp_path: Path) -> None:
    """A warning found by ``grep`` in the log must say when it was seen, not only the run's first line."""
    config = tmp_path / "config.toml"
    script = (
        "import sys; from pathlib import Path; from vaultsync.app.schedule import write_log, log_path; "
        "c = Path(sys.argv[1]); write_log(c, 5, sys.stdin.read()); print(log_path(c))"
    )
    output = "changes:\n  vault   people/sarah: edited\nwarning: a.md: odd\n\nwrote 1 file(s), 1 commit(s): abc\n"
    done = subprocess.run(
        [sys.executable, "-c", script, str(config)],
        input=output,
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
        check=True,
    )
    log = Path(done.stdout.strip()).read_text(encoding="utf-8").splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"
    assert len(log) == 4
    assert re.fullmatch(stamp + r" exit 5: wrote 1 file\(s\), 1 commit\(s\): abc", log[0])
    assert re.fullmatch(stamp + r"     changes:", log[1])
    assert re.fullmatch(stamp + r"       vault   people/sarah: edited", log[2])
    assert re.fullmatch(stamp + r"     warning: a\.md: odd", log[3])
