"""A vault whose repository belongs to another user (an agent running as root in a container, the vault mounted
from the host): git refuses it ("detected dubious ownership"). Every command says git's reason and the
``safe.directory`` fix; none calls it "not a git repository", none offers ``vaultsync init`` as the cure, and
``init`` itself stops with that message instead of crashing.

Real git, real ``chown``: only root can give a folder to another user, so these run as root only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.remote import git
from helpers.twoway import SARAH, Env, isolate_git

from vaultsync.errors import NotARepository, UntrustedRepository
from vaultsync.git.run import ensure_repo, git_dir
from vaultsync.model import ExitCode

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give the vault to another user"
)
NOBODY = 65534
REFUSED = "detected dubious ownership in repository at"


def _give_away(folder: Path) -> None:
    """Every file of ``folder`` to another user, as a vault mounted from the host looks to root in a container."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def _head(vault: Path) -> str:
    """HEAD, read past git's ownership check (the test's own look, not vaultsync's)."""
    return git(vault, "-c", f"safe.directory={vault}", "rev-parse", "HEAD").strip()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, timeout=300)


def test_sync_init_and_doctor_name_git_s_refusal_and_the_safe_directory_fix(env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-096", "fact": "Sarah rows"}))
    head = env.head()
    _give_away(env.vault)
    fix = f"git config --global --add safe.directory {env.vault}"

    synced = _cli("sync", "--config", str(env.config_path))

    said = synced.stdout + synced.stderr
    assert synced.returncode == ExitCode.SAFETY_STOP, said
    assert REFUSED in said and fix in said, said
    assert "is not a git repository" not in said and "vaultsync init" not in said, said
    assert "crashed" not in said

    init = _cli(
        "init",
        "--workspace",
        str(env.workspace),
        "--life",
        str(env.life),
        "--vault",
        str(env.vault),
        "--config",
        str(env.config_path),
    )

    said = init.stdout + init.stderr
    assert init.returncode == ExitCode.SAFETY_STOP, said
    assert REFUSED in said and fix in said and "crashed" not in said, said

    doctor = _cli("doctor", "--config", str(env.config_path))
    assert doctor.returncode != ExitCode.CRASH
    assert REFUSED in doctor.stdout and f"fix: {fix}" in doctor.stdout, doctor.stdout + doctor.stderr
    assert _head(env.vault) == head and not (env.vault / "2 Areas/people/sarah-chen/facts/sarah-chen-096.md").exists()

    subprocess.run(fix.split(), check=True)  # the fix as the message gives it, into the test's own global config
    again = _cli("sync", "--config", str(env.config_path))
    assert again.returncode == ExitCode.CLEAN, again.stdout + again.stderr
    assert (env.vault / "2 Areas/people/sarah-chen/facts/sarah-chen-096.md").is_file()


def test_init_on_a_refused_repository_writes_nothing(env: Env, tmp_path: Path) -> None:
    """The check comes first: no config, no token, no template lands before git's refusal is said."""
    vault = tmp_path / "mounted-vault"
    vault.mkdir()
    git(vault, "init", "-q", "-b", "main")
    (vault / "mine.md").write_text("a note of the host's user\n", encoding="utf-8")
    _give_away(vault)
    config = tmp_path / "fresh" / "config.toml"

    init = _cli(
        "init",
        "--workspace",
        str(env.workspace),
        "--life",
        str(env.life),
        "--vault",
        str(vault),
        "--config",
        str(config),
    )

    said = init.stdout + init.stderr
    assert init.returncode == ExitCode.SAFETY_STOP, said
    assert f"git config --global --add safe.directory {vault}" in said, said
    assert not config.exists() and sorted(p.name for p in vault.iterdir()) == [".git", "mine.md"]


def test_only_the_vault_s_own_repository_is_refused_one_further_up_is_no_repository_of_the_vault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside another user's repository the vault has none of its own: init makes one, owned by whoever runs it."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    _give_away(outer)
    vault = outer / "vault"  # root's own folder in it
    vault.mkdir()

    with pytest.raises(NotARepository) as raised:
        git_dir(vault)
    assert not isinstance(raised.value, UntrustedRepository)
    with pytest.raises(UntrustedRepository, match=r"safe\.directory"):
        git_dir(outer)
    assert ensure_repo(vault) is True
    assert git_dir(vault) == vault / ".git"
