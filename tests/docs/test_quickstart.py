"""docs/quickstart.md, followed literally on a temporary home: OpenClaw's default workspace holding the example
memory, an Obsidian config listing a vault, the checkout's vaultsync on the PATH. Every ``sh`` block runs in
the page's order; the one step done in Obsidian (enabling the plugin) is done as Obsidian records it; at the end
``vaultsync doctor`` exits 0 and the vault holds the memory. Not run: the install block (``no-run``) and the
OpenClaw block (``openclaw``), as the page's last section says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO
from helpers.twoway import isolate_git

ROOT = REPO
PAGE = ROOT / "docs" / "quickstart.md"
FENCE = re.compile(r"(?ms)^```sh([^\n]*)\n(.*?)^```\s*$")
SKIPPED = {"no-run", "openclaw"}


def blocks() -> list[tuple[str, str]]:
    """(marks, script) of every sh block, in the page's order."""
    return [(marks.strip(), body) for marks, body in FENCE.findall(PAGE.read_text(encoding="utf-8"))]


@pytest.fixture
def saved_crontab() -> Iterator[None]:
    """The service and the schedule go into the real crontab where there is no systemd: put it back after."""
    if shutil.which("crontab") is None and not Path("/run/systemd/system").is_dir():
        pytest.skip("no crontab and no systemd: `service install` would only print a manual step (CI has cron)")
    before = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    yield
    if before.returncode == 0:
        subprocess.run(["crontab", "-"], input=before.stdout, text=True, check=True)
    else:
        subprocess.run(["crontab", "-r"], capture_output=True, check=False)


def test_the_page_has_the_steps_it_promises() -> None:
    found = blocks()
    marks = [m for m, _ in found]
    assert marks.count("no-run") == 1 and marks.count("openclaw") == 1
    scripts = "\n".join(body for _, body in found)
    for command in ("vaultsync init --yes", "vaultsync sync", "vaultsync obsidian install", "vaultsync doctor"):
        assert command in scripts
    assert "vaultsync openclaw install" in dict((m, b) for m, b in found)["openclaw"]


def test_the_quickstart_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved_crontab: None) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    home = tmp_path / "home"
    workspace = home / ".openclaw" / "workspace"
    shutil.copytree(ROOT / "vault-example" / "workspace", workspace)
    shutil.copytree(ROOT / "vault-example" / "life", workspace / "life")
    vault = home / "Documents" / "Memory"
    (vault / ".obsidian").mkdir(parents=True)
    (home / ".config" / "obsidian").mkdir(parents=True)
    listing = {"vaults": {"4f1c0a2b": {"path": str(vault), "ts": 1764000000000, "open": True}}}
    (home / ".config" / "obsidian" / "obsidian.json").write_text(json.dumps(listing), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VAULTSYNC_", "XDG_", "OPENCLAW_"))}
    env |= {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", "NO_COLOR": "1"}
    outputs = []
    try:
        for marks, script in blocks():
            if SKIPPED & set(marks.split()):
                continue
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", script],
                cwd=home,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
            outputs.append(done.stdout)
            if "vaultsync obsidian install" in script:  # then, in Obsidian: enable the plugin
                (vault / ".obsidian" / "community-plugins.json").write_text('["vaultsync"]\n', encoding="utf-8")
    finally:
        subprocess.run(["bash", "-c", "vaultsync service remove"], cwd=home, env=env, capture_output=True, check=False)
        subprocess.run(["bash", "-c", "vaultsync schedule remove"], cwd=home, env=env, capture_output=True, check=False)
    assert f"vault: {vault} (listed by Obsidian" in outputs[0]
    assert "next: vaultsync sync" in outputs[0]
    assert (vault / "2 Areas" / "people" / "sarah-chen" / "sarah-chen.md").is_file()
    assert "FAIL" not in outputs[-1] and "ok    serve" in outputs[-1], outputs[-1]
