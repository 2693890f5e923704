"""Fixtures shared by the test modules that start from vault-example after one clean first pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.twoway import Env, build_synced, clone, isolate_git


@pytest.fixture(scope="session")
def synced_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """vault-example synced once per test run; tests copy it rather than pay for a first pass each."""
    root = tmp_path_factory.mktemp("synced-template")
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(mp.setenv, root / "git-env")
        build_synced(root / "setup")
    return root / "setup"


@pytest.fixture
def env(synced_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """A private copy of the synced template; monkeypatch.setenv also reaches every `vaultsync` or git child."""
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    return clone(synced_template, tmp_path / "setup")
