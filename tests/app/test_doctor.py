"""``vaultsync doctor`` on a whole chain: a vault with a remote, a service that owns the pass, a real ``serve``,
the vault plugin installed and enabled. Every check is ok and the exit code 0; then one link is broken at a time
(the token file deleted, ``serve`` stopped, the remote renamed) and doctor names that link and the command that
fixes it, and exits 1. OpenClaw absent is reported as not installed; present (its config file as ``vaultsync
openclaw install`` leaves it), its plugin's config is read from that file and compared with this vault's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from helpers import REPO
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


def _stand_in_openclaw(folder: Path) -> str:
    """A program named ``openclaw`` answering ``--version`` (the versions line asks it): the real one needs Node
    24, which these tests do not install. The plugin's line reads OpenClaw's config file, not this program."""
    folder.mkdir()
    script = folder / "openclaw"
    script.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "OpenClaw 2026.9.6"; exit 0; fi\nexit 1\n', encoding="utf-8"
    )
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def _openclaw_config(home: Path, plugin: Path, entry: dict[str, object], slot: str = "memory-core") -> None:
    """OpenClaw's config as ``openclaw plugins install --link`` and ``config set`` leave it, in JSON5."""
    state = home / ".openclaw"
    state.mkdir(exist_ok=True)
    plugins = {"load": {"paths": [str(plugin)]}, "slots": {"memory": slot}, "entries": {"vaultsync-memory": entry}}
    (state / "openclaw.json").write_text(f"// written by OpenClaw\n{json.dumps({'plugins': plugins})}\n", "utf-8")


def test_the_openclaw_plugins_config_is_compared_with_this_vault(
    chain: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = chain
    for name in ("OPENCLAW_HOME", "OPENCLAW_STATE_DIR", "OPENCLAW_CONFIG_PATH", "OPENCLAW_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    home = Path(os.environ["HOME"])
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / "vaultsync" / "openclaw_plugin", plugin)
    with _serving(env, free_port()) as url:
        _set_up(env, url)
        monkeypatch.setenv("PATH", _stand_in_openclaw(tmp_path / "bin"))
        settings = {"baseUrl": url, "tokenFile": str(env.cfg.token_path), "mode": "supplement"}
        good = {"enabled": True, "hooks": {"allowConversationAccess": True}, "config": settings}
        _openclaw_config(home, plugin, good)
        code, checks = _doctor(env)
        assert code == 0, checks
        assert checks["openclaw"]["detail"] == f"vaultsync-memory installed in supplement mode, pointing at {url}"
        assert "openclaw 2026.9.6" in checks["versions"]["detail"]

        wrong = {"enabled": True, "config": {"baseUrl": "http://127.0.0.1:1", "tokenFile": "/elsewhere/token"}}
        _openclaw_config(home, plugin, wrong)
        code, checks = _doctor(env)
        assert code == 1 and _failed(checks) == ["openclaw"]
        assert "baseUrl is http://127.0.0.1:1" in checks["openclaw"]["detail"]
        assert "tokenFile is /elsewhere/token" in checks["openclaw"]["detail"]
        assert "hooks.allowConversationAccess is not true" in checks["openclaw"]["detail"]
        assert checks["openclaw"]["fix"] == "vaultsync openclaw install"

        (plugin / "index.js").write_text("export default {};\n", encoding="utf-8")  # an older vaultsync's copy
        _openclaw_config(home, plugin, {**good, "config": {**settings, "mode": "slot"}})
        code, checks = _doctor(env)
        assert code == 1 and _failed(checks) == ["openclaw"]
        assert f"the plugin in {plugin} is not the one this vaultsync ships" in checks["openclaw"]["detail"]
        assert "slot mode, but the memory slot is memory-core's" in checks["openclaw"]["detail"]
        assert checks["openclaw"]["fix"] == "vaultsync openclaw install --mode slot"
