"""Fixtures shared by the test modules: vault-example after one clean first pass, and a short wait for git's lock."""

from __future__ import annotations

import fcntl
import functools
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.crash import SHORT_LOCK_WAIT
from helpers.twoway import Env, build_synced, clone, isolate_git

from vaultsync.git import run as gitrun


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


@pytest.fixture
def short_lock_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale ``.git/index.lock`` looks to vaultsync like obsidian-git's live one, so each git command that meets
    it is retried for ``LOCK_WAIT_SECONDS`` (10 s) before the pass gives up; a refused commit pays that twice (the
    staging, then putting the index back). What the wait is for is proven by a lock held for a moment and
    released (promises/test_safety.py); a test of what follows the giving up waits ``SHORT_LOCK_WAIT`` instead."""
    monkeypatch.setattr(gitrun, "LOCK_WAIT_SECONDS", SHORT_LOCK_WAIT)


@pytest.fixture(autouse=True)
def one_crontab_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """The suite runs on every core (pytest-xdist), but a user has one crontab: a test from a file that touches it
    holds a lock shared by every worker (and by any other run of the suite on this machine), so no two of them
    rewrite it at once. A lock rather than xdist's groups, which pytest 9.2 no longer honours."""
    if not _touches_crontab(request.path):
        yield
        return
    with (Path(tempfile.gettempdir()) / "vaultsync-tests-crontab.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@functools.cache
def _touches_crontab(path: Path) -> bool:
    return "crontab" in path.read_text(encoding="utf-8")
