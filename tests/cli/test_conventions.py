"""The command line's habits as git and clig.dev teach them: "did you mean" for a mistyped command or option,
``--config`` before or after the command, short flags, and ``recall``/``log`` printing a table only to a
terminal, whole paths and one line per hit into a pipe."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest
from helpers.twoway import SARAH_DIR, Env

from vaultsync import cli


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


def test_typos_get_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert "did you mean 'sync'?" in _refused(["snyc"], capsys)
    assert "did you mean '--dry-run'?" in _refused(["sync", "--dryrun"], capsys)
    assert "did you mean '--limit'?" in _refused(["recall", "x", "--limt", "3"], capsys)
    assert "did you mean 'install'?" in _refused(["schedule", "instal"], capsys)
    assert "did you mean" not in _refused(["sync", "--zzzzzz"], capsys)


def test_config_before_or_after_the_command(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(env.config_path)
    for argv in (["--config", config, "status", "--json"], ["status", "--json", "--config", config]):
        assert cli.main(argv) == 0, argv
        assert json.loads(capsys.readouterr().out)["exit_code"] == 0
    assert cli.main(["-c", config, "sync", "-n", "-j"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True
    missing = str(env.root / "nowhere.toml")
    assert cli.main(["-c", missing, "status"]) == 2 and "nowhere.toml" in capsys.readouterr().err


def test_short_flags(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(env.config_path)
    (env.workspace / "memory" / "2026-12-02.md").write_text("# 2026-12-02\n\n- met Sarah\n", encoding="utf-8")
    assert cli.main(["sync", "-n", "-c", config]) == 0
    assert "would write" in capsys.readouterr().out
    assert not (env.vault / "Daily" / "2026-12-02.md").exists()
    assert cli.main(["sync", "-q", "-c", config]) == 0
    assert capsys.readouterr().out == ""
    assert (env.vault / "Daily" / "2026-12-02.md").exists()
    assert cli.main(["log", "-j", "-c", config, "--limit", "1"]) == 0
    assert len(json.loads(capsys.readouterr().out)["changes"]) == 1


def test_recall_and_log_into_a_pipe(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(env.config_path)
    assert cli.main(["recall", "Sarah Chen", "--limit", "5", "-c", config]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5
    for line in lines:
        score, kind, where, text = line.split("\t")
        assert "/" in where
        assert float(score) >= 0 and kind in {"fact", "summary", "memory", "daily"} and text
    assert any(line.split("\t")[2].startswith(f"{SARAH_DIR}/facts/") for line in lines)
    (env.workspace / "memory" / "2026-12-02.md").write_text("# 2026-12-02\n\n- met Sarah\n", encoding="utf-8")
    env.sync()
    assert cli.main(["log", "--limit", "3", "-c", config]) == 0
    changes = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(changes) == 2 and all(len(cells) == 5 for cells in changes)
    assert changes[0][3] == "Daily/2026-12-02.md" and changes[1][3].endswith("(+46 more)")


def _on_a_terminal(env: Env, columns: int, *args: str) -> str:
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
    argv = [sys.executable, "-m", "vaultsync.cli", *args, "-c", str(env.config_path)]
    plain = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"NO_COLOR": "1"}
    with subprocess.Popen(argv, stdout=child, stderr=child, stdin=child, env=plain) as proc:
        os.close(child)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        proc.wait()
    os.close(main)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.decode())
    assert proc.returncode == 0, text
    return text


def test_recall_on_a_terminal_keeps_paths_whole(env: Env) -> None:
    path = "1 Projects/project-atlas/facts/atlas-005.md"
    wide = _on_a_terminal(env, 140, "recall", "firmware", "--kind", "fact")
    assert "score" in wide and "━" in wide and path in wide, wide  # a table
    narrow = _on_a_terminal(env, 60, "recall", "firmware", "--kind", "fact")
    assert "━" not in narrow and any(line.split("\t")[2] == path for line in narrow.splitlines()), narrow
