"""``vaultsync obsidian install``, run as a person runs it: the built plugin copied into the vault's settings folder,
its data.json holding the API's address and token (private, git-ignored, the ignore line committed), the person's
other settings kept on a second run, and one clear message when there is no built plugin to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.server import TOKEN
from helpers.twoway import Env

from vaultsync.app.obsidian import shipped
from vaultsync.state.files import StateFiles
from vaultsync.system.lock import run_lock

PLUGIN = ".obsidian/plugins/vaultsync"


def _built(tmp: Path) -> Path:
    folder = tmp / "built"
    folder.mkdir()
    (folder / "main.js").write_text("module.exports = {};\n", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"id": "vaultsync", "version": "0.1.0"}), encoding="utf-8")
    return folder


def _install(env: Env, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "obsidian", "install", "--config", str(env.config_path), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "VAULTSYNC_TOKEN": TOKEN},
        timeout=120,
    )


def test_install_copies_the_plugin_and_writes_private_ignored_settings(env: Env, tmp_path: Path) -> None:
    built = _built(tmp_path)

    done = _install(env, "--from", str(built), "--url", "http://127.0.0.1:9999/")

    assert done.returncode == 0, done.stderr
    assert "enable the plugin" in done.stdout
    folder = env.vault / PLUGIN
    assert (folder / "main.js").read_bytes() == (built / "main.js").read_bytes()
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["id"] == "vaultsync"
    data = folder / "data.json"
    assert json.loads(data.read_text(encoding="utf-8")) == {"baseUrl": "http://127.0.0.1:9999", "token": TOKEN}
    assert data.stat().st_mode & 0o777 == 0o600
    assert f"{PLUGIN}/" in (env.vault / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert env.git("status", "--porcelain") == "", "the plugin's folder or the .gitignore line was left for git"
    assert "vaultsync obsidian install" in env.git("log", "-1", "--format=%s")
    assert TOKEN not in env.git("log", "-p", "--all")


def test_a_second_install_updates_and_keeps_the_persons_settings(env: Env, tmp_path: Path) -> None:
    built = _built(tmp_path)
    assert _install(env, "--from", str(built)).returncode == 0
    data = env.vault / PLUGIN / "data.json"
    data.write_text(json.dumps({"baseUrl": "http://old", "token": "old", "pollSeconds": 30}), encoding="utf-8")
    head = env.head()

    again = _install(env, "--from", str(built), "--json")

    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["ignored"] is False
    settings = json.loads(data.read_text(encoding="utf-8"))
    assert settings == {"baseUrl": "http://127.0.0.1:8765", "token": TOKEN, "pollSeconds": 30}
    assert env.head() == head, "a second install committed again"


def test_no_built_plugin_is_one_clear_message(env: Env, tmp_path: Path) -> None:
    done = _install(env, "--from", str(tmp_path / "nothing"))

    assert done.returncode == 2
    assert "npm ci && npm run build" in done.stderr and "--from" in done.stderr
    assert not (env.vault / PLUGIN).exists()


def test_a_settings_folder_name_that_leaves_the_vault_is_refused(env: Env, tmp_path: Path) -> None:
    done = _install(env, "--from", str(_built(tmp_path)), "--config-dir", "../elsewhere")

    assert done.returncode == 2 and "--config-dir" in done.stderr
    assert not (env.vault.parent / "elsewhere").exists()


@pytest.mark.skipif(not (shipped() / "main.js").is_file(), reason="the plugin is not built (npm run build)")
def test_the_plugin_built_into_the_package_is_what_gets_installed(env: Env) -> None:
    done = _install(env, "--json")

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["folder"] == PLUGIN
    for name in ("main.js", "manifest.json", "styles.css"):
        assert (env.vault / PLUGIN / name).read_bytes() == (shipped() / name).read_bytes()


def test_install_waits_its_turn_behind_a_running_pass(env: Env, tmp_path: Path) -> None:
    """The copies and the .gitignore commit go through the write path: while a pass holds the lock, nothing is
    written and the exit code says why (3), as for every other write."""
    source = _built(tmp_path)
    with run_lock(StateFiles(env.cfg.state_dir).lock):
        done = _install(env, "--from", str(source))
    assert done.returncode == 3, done.stderr
    assert "lock held" in done.stderr
    assert not (env.vault / PLUGIN).exists()
    assert _install(env, "--from", str(source)).returncode == 0
    assert (env.vault / PLUGIN / "main.js").is_file()
