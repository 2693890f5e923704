"""Roots that overlap are refused by every command, not only by ``init`` (docs/cli.md, exit code 2).

A vault inside, equal to or holding a memory root mirrors itself deeper on every pass; a life folder inside the
workspace's ``memory/`` gives each file two notes. Each test writes the config by hand, as a person would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.e2e import tree_bytes

from vaultsync import cli
from vaultsync.app.init import init_vault
from vaultsync.errors import ConfigError
from vaultsync.model import ExitCode


def _tree(root: Path) -> None:
    (root / "ws/memory/life/areas/people/ana").mkdir(parents=True)
    (root / "ws/MEMORY.md").write_text("## Rules [P0]\n\nBe kind.\n", encoding="utf-8")
    (root / "ws/memory/2026-01-30.md").write_text("# 2026-01-30\n", encoding="utf-8")
    ana = root / "ws/memory/life/areas/people/ana"
    (ana / "items.json").write_text(json.dumps([{"id": "a1", "fact": "Ana plays chess"}]), encoding="utf-8")
    (root / "life/areas").mkdir(parents=True)
    (root / "vault").mkdir()


CASES = {
    "vault-inside-life": ("ws", "life", "life/vault", "may not be inside, equal to, or a parent of the life folder"),
    "vault-equal-to-workspace": ("ws", "life", "ws", "parent of the workspace folder"),
    "vault-parent-of-life": ("ws", "life", ".", "parent of the workspace folder"),
    "life-inside-memory": ("ws", "ws/memory/life", "vault", "would be synced twice"),
    "life-equal-to-memory": ("ws", "ws/memory", "vault", "would be synced twice"),
    "memory-inside-a-para-folder": ("life/areas/ws", "life", "vault", "would be synced twice"),
}


@pytest.mark.parametrize(("workspace", "life", "vault", "said"), CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("command", ["sync", "status"])
def test_sync_refuses_overlapping_roots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, workspace: str, life: str, vault: str, said: str
) -> None:
    _tree(tmp_path)
    (tmp_path / "life/areas/ws").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nworkspace = "{workspace}"\nlife = "{life}"\nvault = "{vault}"\n', encoding="utf-8")
    before = tree_bytes(tmp_path, exclude=())

    assert cli.main([command, "--config", str(config)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert said in err and str(config) in err, err
    assert tree_bytes(tmp_path, exclude=()) == before, "nothing was created or written"
    assert not list(tmp_path.rglob(".vaultsync"))


def test_init_refuses_a_life_folder_inside_memory_and_warns_about_one_inside_the_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _tree(tmp_path)
    with pytest.raises(ConfigError, match="would be synced twice"):
        init_vault(tmp_path / "ws", tmp_path / "ws/memory/life", tmp_path / "vault", tmp_path / "c1.toml")
    assert not (tmp_path / "c1.toml").exists()

    (tmp_path / "ws/graph/areas").mkdir(parents=True)
    args = [
        "--workspace",
        str(tmp_path / "ws"),
        "--life",
        str(tmp_path / "ws/graph"),
        "--vault",
        str(tmp_path / "vault"),
    ]
    assert cli.main(["init", *args, "--config", str(tmp_path / "c2.toml")]) == ExitCode.CLEAN
    err = capsys.readouterr().err
    assert "warning: the life folder" in err and "is inside the workspace" in err and "memory/" in err
    assert cli.main(["sync", "--config", str(tmp_path / "c2.toml")]) == ExitCode.CLEAN
