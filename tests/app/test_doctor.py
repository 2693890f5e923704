"""``vaultsync doctor`` on a whole chain: a vault with a remote, a service that owns the pass, a real ``serve``,
the vault plugin installed and enabled. Every check is ok and the exit code 0; then one link is broken at a time
(the token file deleted, ``serve`` stopped, the remote renamed) and doctor names that link and the command that
fixes it, and exits 1. OpenClaw absent is reported as not installed; present (a stand-in ``openclaw`` printing
what ``openclaw config get`` prints), its plugin's config is read and compared with this vault's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from helpers.server import free_port
from helpers.twoway import Env

from vaultsync.app.init import make_token


@pytest.fixture
def chain(env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "VAULTSYNC_TOKEN", "VAULTSYNC_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    env.git("remote", "add", "origin", str(bare))
    env.git("push", "-q", "origin", "main")
    with env.config_path.open("a", encoding="utf-8") as config:
        config.write('\n[remote]\nname = "origin"\nbranch = "main"\n')
    assert env.cfg.token_path is not None
    make_token(env.cfg.token_path)
    return env


def _vs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


@contextmanager
def _serving(env: Env, port: int) -> Iterator[str]:
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "serve", "--port", str(port), "--config", str(env.config_path)]
    )
    try:
        for _ in range(600):  # waiting for start-up, not a measurement
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, "serve exited"
            __import__("time").sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _doctor(env: Env, *extra: str) -> tuple[int, dict[str, dict[str, str]]]:
    done = _vs("doctor", "--json", "--config", str(env.config_path), *extra)
    report = json.loads(done.stdout)
    assert report["exit_code"] == done.returncode and report["ok"] is (done.returncode == 0)
    return done.returncode, {check["name"]: check for check in report["checks"]}


def _failed(checks: dict[str, dict[str, str]]) -> list[str]:
    return [name for name, check in checks.items() if check["status"] == "fail"]


def _set_up(env: Env, url: str) -> None:
    assert (
        _vs("service", "install", "--watch", "--manager", "systemd", "--config", str(env.config_path)).returncode == 0
    )
    assert _vs("obsidian", "install", "--url", url, "--config", str(env.config_path)).returncode == 0
    (env.vault / ".obsidian" / "community-plugins.json").write_text('["vaultsync"]\n', encoding="utf-8")


def test_every_link_ok_then_each_broken_link_named_with_its_fix(chain: Env) -> None:
    env = chain
    port = free_port()
    with _serving(env, port) as url:
        _set_up(env, url)
        code, checks = _doctor(env)
        assert code == 0, checks
        order = ["config", "roots", "git", "remote", "schedule", "serve", "openclaw", "obsidian", "versions"]
        assert list(checks) == order
        assert checks["openclaw"] == {
            "name": "openclaw",
            "status": "skip",
            "detail": "not installed (openclaw is not on PATH)",
            "fix": "",
        }
        assert "origin/main reachable" in checks["remote"]["detail"]
        assert "the service" in checks["schedule"]["detail"]

        token = env.cfg.token_path
        assert token is not None
        saved = token.read_bytes()
        token.unlink()
        code, checks = _doctor(env)
        assert code == 1 and _failed(checks) == ["serve"], checks
        assert str(token) in checks["serve"]["detail"] and checks["serve"]["fix"].startswith("vaultsync init ")
        token.write_bytes(saved)

        text = _vs("doctor", "--config", str(env.config_path))
        assert text.returncode == 0 and "FAIL" not in text.stdout, text.stdout

    code, checks = _doctor(env)
    assert code == 1 and _failed(checks) == ["serve"], checks
    assert "nothing answers" in checks["serve"]["detail"] and checks["serve"]["fix"] == "vaultsync service install"

    with _serving(env, port):
        env.git("remote", "rename", "origin", "upstream")
        code, checks = _doctor(env)
        assert code == 1 and _failed(checks) == ["remote"], checks
        assert "no remote named 'origin'" in checks["remote"]["detail"]
        assert checks["remote"]["fix"].endswith("remote rename upstream origin")


def test_a_missing_config_is_the_first_link_and_the_rest_wait(tmp_path: Path) -> None:
    done = _vs("doctor", "--config", str(tmp_path / "none.toml"))
    assert done.returncode == 1
    assert done.stdout.startswith(f"FAIL  config    no config at {tmp_path / 'none.toml'}\n")
    assert "fix: vaultsync init" in done.stdout and "skip  remote" in done.stdout


def _stand_in_openclaw(folder: Path, entry: object) -> str:
    """A program named ``openclaw`` answering ``config get ... --json`` with ``entry`` (as the real one prints an
    entry) and ``--version``: the real one needs Node 24, which these tests do not install."""
    folder.mkdir()
    script = folder / "openclaw"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "OpenClaw 2026.9.6"; exit 0; fi\n'
        'if [ "$1 $2 $3" = "config get plugins.entries.vaultsync-memory" ]; then\n'
        f"  echo {json.dumps(json.dumps(entry))}; exit 0\nfi\n"
        "exit 1\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_the_openclaw_plugins_config_is_compared_with_this_vault(
    chain: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = chain
    with _serving(env, free_port()) as url:
        _set_up(env, url)
        good = {"enabled": True, "config": {"baseUrl": url, "tokenFile": str(env.cfg.token_path), "mode": "supplement"}}
        monkeypatch.setenv("PATH", _stand_in_openclaw(tmp_path / "good", good))
        code, checks = _doctor(env)
        assert code == 0, checks
        assert checks["openclaw"]["detail"] == f"vaultsync-memory installed in supplement mode, pointing at {url}"
        assert "openclaw 2026.9.6" in checks["versions"]["detail"]

        wrong = {"enabled": True, "config": {"baseUrl": "http://127.0.0.1:1", "tokenFile": "/elsewhere/token"}}
        monkeypatch.setenv("PATH", _stand_in_openclaw(tmp_path / "wrong", wrong))
        code, checks = _doctor(env)
        assert code == 1 and _failed(checks) == ["openclaw"]
        assert "baseUrl is http://127.0.0.1:1" in checks["openclaw"]["detail"]
        assert "tokenFile is /elsewhere/token" in checks["openclaw"]["detail"]
        assert checks["openclaw"]["fix"] == "vaultsync openclaw install"
