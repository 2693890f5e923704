"""The vault repository adapter against a real git repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vaultsync.gitrepo import Author, VaultRepo, ensure_repo


def test_a_commit_message_longer_than_the_argument_limit_is_committed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first import of a large memory lists every scope in the body: 200k facts make ~12,000 lines."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("")
    vault = tmp_path / "vault"
    vault.mkdir()
    ensure_repo(vault)
    (vault / "note.md").write_text("x\n")
    body = "\n".join(f"people/person-{n:05d} +25 facts, summary" for n in range(12_000))
    message = f"memory -> vault: 12000 entities\n\n{body}"
    assert len(message.encode()) > 128 * 1024
    sha = VaultRepo(vault).commit(["note.md"], message, Author("vaultsync agent", "agent@vaultsync.invalid"))
    logged = subprocess.run(
        ["git", "-C", str(vault), "log", "-1", "--format=%B", sha or "HEAD"], capture_output=True, text=True, check=True
    ).stdout
    assert logged.rstrip("\n") == message
