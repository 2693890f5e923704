"""``vaultsync init`` with nothing typed but ``--yes``: on a temporary home holding OpenClaw's config (two agents,
each with its workspace) and Obsidian's list of vaults, it picks the default agent's workspace, makes the missing
life folder and says so, takes the one vault Obsidian lists, ends by naming the next command, and that command
(the first sync) succeeds. With two vaults it asks (or refuses under ``--yes``); ``--agent``, ``OPENCLAW_HOME``,
profiles, JSON5 and the Flatpak place are honoured; the explicit flags work as before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import isolate_git

ROOT = REPO
EXAMPLE = ROOT / "vault-example"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    home = tmp_path / "home"
    home.mkdir()
    return home


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULTSYNC_", "XDG_", "OPENCLAW_"))}
    return {**env, "HOME": str(home), **extra}


def _vs(home: Path, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(home, **extra),
        cwd=home,
        timeout=120,
    )


def _workspace(folder: Path, life: bool = False) -> Path:
    shutil.copytree(EXAMPLE / "workspace", folder)
    if life:
        shutil.copytree(EXAMPLE / "life", folder / "life")
    return folder


def _openclaw(home: Path, config: str, state: str = ".openclaw") -> Path:
    path = home / state / "openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config, encoding="utf-8")
    return path


def _obsidian(home: Path, *vaults: Path, where: str = ".config/obsidian") -> None:
    listing = {"vaults": {f"id{n}": {"path": str(v), "ts": 1_700_000_000_000 + n} for n, v in enumerate(vaults)}}
    for vault in vaults:
        (vault / ".obsidian").mkdir(parents=True, exist_ok=True)
    (home / where).mkdir(parents=True, exist_ok=True)
    (home / where / "obsidian.json").write_text(json.dumps(listing), encoding="utf-8")


TWO_AGENTS = """{
  // two agents, as `openclaw agents add` leaves them; JSON5, as OpenClaw reads it
  agents: {
    list: [
      { id: "main", default: true, workspace: "~/.openclaw/workspace" },
      { id: "work", workspace: "~/work-agent" },
    ],
  },
}
"""


def test_init_yes_finds_the_default_agent_the_one_vault_and_makes_the_life_folder(home: Path) -> None:
    main = _workspace(home / ".openclaw" / "workspace")
    _workspace(home / "work-agent", life=True)
    _openclaw(home, TWO_AGENTS)
    _obsidian(home, home / "Notes")

    done = _vs(home, "init", "--yes")

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"workspace: {main} (OpenClaw agent main" in out
    assert "1) main" in out and "2) work" in out, "the two agents are offered as such"
    assert f"created the life folder (it was missing): {main / 'life'}" in out
    assert f"vault: {home / 'Notes'} (listed by Obsidian" in out
    assert out.rstrip().splitlines()[-1] == "next: vaultsync sync"
    assert "warning" not in done.stderr, "the workspace's own life/ is the expected place, not a surprise"
    config = (home / ".config/vaultsync/config.toml").read_text(encoding="utf-8")
    assert f'workspace = "{main}"' in config and f'life = "{main / "life"}"' in config
    assert f'vault = "{home / "Notes"}"' in config

    first = _vs(home, "sync")
    assert first.returncode == 0, first.stdout + first.stderr
    assert (home / "Notes" / "Daily").is_dir() and (home / "Notes" / ".git").is_dir()


def test_agent_picks_another_agents_workspace(home: Path) -> None:
    _workspace(home / ".openclaw" / "workspace")
    work = _workspace(home / "work-agent", life=True)
    _openclaw(home, TWO_AGENTS)

    done = _vs(home, "init", "--yes", "--agent", "work", "--vault", str(home / "WorkVault"))

    assert done.returncode == 0, done.stderr
    assert f"workspace: {work} (OpenClaw agent work" in done.stdout
    assert "created the life folder" not in done.stdout
    unknown = _vs(home, "init", "--yes", "--agent", "nobody", "--config", str(home / "x.toml"))
    assert unknown.returncode == 2 and "main, work" in unknown.stderr


def test_two_vaults_are_listed_and_asked_for_and_yes_refuses_to_guess(home: Path) -> None:
    _workspace(home / ".openclaw" / "workspace", life=True)
    _obsidian(home, home / "Personal", home / "Memory")

    refused = _vs(home, "init", "--yes")
    assert refused.returncode == 2
    assert "--vault" in refused.stderr and not (home / ".config/vaultsync/config.toml").exists()
    assert str(home / "Personal") in refused.stdout and str(home / "Memory") in refused.stdout

    asked = _vs(home, "init", stdin="7\n2\n")
    assert asked.returncode == 0, asked.stderr
    assert "which vault?" in asked.stdout and "answer with a number" in asked.stdout
    listed = [line for line in asked.stdout.splitlines() if line.startswith("  ") and ") " in line]
    chosen = Path(listed[1].split(") ", 1)[1].removesuffix(" (open last)"))
    assert f'vault = "{chosen}"' in (home / ".config/vaultsync/config.toml").read_text(encoding="utf-8")

    unanswered = _vs(home, "init", "--config", str(home / "other.toml"))
    assert unanswered.returncode == 2 and "--vault" in unanswered.stderr


def test_no_config_means_the_default_workspace_and_a_new_vault(home: Path) -> None:
    default = _workspace(home / ".openclaw" / "workspace", life=True)

    done = _vs(home, "init", "--yes")

    assert done.returncode == 0, done.stderr
    assert f"workspace: {default} (OpenClaw agent main, OpenClaw's default workspace)" in done.stdout
    assert f"vault: {home / 'Obsidian/Memory'} (new" in done.stdout
    assert (home / "Obsidian/Memory/.git").is_dir()


def test_nothing_found_names_where_it_looked_and_the_option(home: Path) -> None:
    done = _vs(home, "init", "--yes")

    assert done.returncode == 2
    assert str(home / ".openclaw" / "workspace") in done.stderr and "--workspace" in done.stderr
    assert not (home / ".config/vaultsync").exists()


def test_openclaw_home_and_profiles_are_honoured(home: Path) -> None:
    elsewhere = home / "oc-home"
    moved = _workspace(elsewhere / "agent-ws", life=True)
    _openclaw(elsewhere, '{"agents": {"list": [{"id": "solo", "workspace": "~/agent-ws"}]}}')
    done = _vs(home, "init", "--yes", OPENCLAW_HOME=str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert f"workspace: {moved} (OpenClaw agent solo, from {elsewhere / '.openclaw/openclaw.json'})" in done.stdout

    profiled = _workspace(home / ".openclaw-lab" / "workspace", life=True)
    _openclaw(home, '{"agents": {"defaults": {"model": "x"}}}', state=".openclaw-lab")
    config = str(home / "lab.toml")
    by_flag = _vs(home, "init", "--yes", "--openclaw-profile", "lab", "--config", config)
    assert by_flag.returncode == 0, by_flag.stderr
    assert f"workspace: {profiled}" in by_flag.stdout
    by_env = _vs(home, "init", "--yes", "--config", config, OPENCLAW_PROFILE="lab")
    assert by_env.returncode == 0 and f"workspace: {profiled}" in by_env.stdout, by_env.stderr


def test_flatpak_obsidian_and_an_unreadable_openclaw_config(home: Path) -> None:
    _workspace(home / ".openclaw" / "workspace", life=True)
    _openclaw(home, "{ this is not json5")
    _obsidian(home, home / "FlatVault", where=".var/app/md.obsidian.Obsidian/config/obsidian")

    done = _vs(home, "init", "--yes")

    assert done.returncode == 0, done.stderr
    assert "cannot read OpenClaw's config" in done.stderr
    assert f"vault: {home / 'FlatVault'} (listed by Obsidian" in done.stdout


def test_the_explicit_paths_work_as_before_and_a_missing_life_is_made(home: Path) -> None:
    workspace = _workspace(home / "clawd")
    done = _vs(home, "init", "--workspace", str(workspace), "--life", str(home / "life"), "--vault", str(home / "V"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"created the life folder (it was missing): {home / 'life'}\nconfig: ")
    assert "workspace:" not in done.stdout and (home / "life").is_dir()
