"""The one write path: every change, from every face, gets the same remote round, guards and honest authors.

Real files, real git, a real bare remote; the HTTP API through its ASGI app.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path

from fastapi.testclient import TestClient
from helpers.e2e import git
from helpers.remote import meet
from helpers.server import AUTH, TOKEN
from helpers.twoway import AGENT_NAME, SARAH, SARAH_DIR, TODAY, Env, set_body

from vaultsync.app import memory
from vaultsync.app.janitor import janitor
from vaultsync.app.sync import PassOptions, sync
from vaultsync.cli import main
from vaultsync.model import ExitCode, client
from vaultsync.server.http import create_app

OPENCLAW = {**AUTH, "X-Vaultsync-Client": "openclaw"}


def _author(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "log", "-1", "--format=%an", rev).strip()


# -- API writes run the remote round ------------------------------------------------------------------------
def test_an_http_remember_with_a_remote_is_on_the_remote_when_it_returns(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    api = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")

    r = api.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen runs on Sundays"}, headers=OPENCLAW)

    assert r.status_code == 201, r.text
    fact_id = r.json()["fact"]["id"]
    assert m.remote_head() == env.head(), "the write returned before its commit reached the remote"
    listed = git(m.bare, "ls-tree", "-r", "--name-only", "refs/heads/main")
    assert f"{SARAH_DIR}/facts/{fact_id}.md" in listed.splitlines()
    assert _author(m.bare, "refs/heads/main") == "vaultsync api (openclaw)"
    assert r.json()["sync"]["exit_code"] == 0 and r.json()["remote"]["pushed"] is True


def test_an_http_remember_with_the_remote_away_says_it_is_waiting(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    m.bare.rename(tmp_path / "away.git")
    api = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")

    r = api.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen runs on Sundays"}, headers=AUTH)

    assert r.status_code == 201, r.text
    body = r.json()
    assert body["sync"]["exit_code"] == ExitCode.NOT_PUSHED == 6
    assert body["remote"]["pushed"] is False and body["remote"]["waiting_since"]
    assert body["fact"] and (env.vault / SARAH_DIR / "facts" / f"{body['fact']['id']}.md").is_file()


# -- who acted ------------------------------------------------------------------------------------------------
def test_each_actor_commits_under_its_own_name(env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="work"))
    assert sync(env.cfg, PassOptions(today=TODAY)).commits
    assert _author(env.vault) == AGENT_NAME

    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants the agenda a week ahead\n")
    assert sync(env.cfg, PassOptions(today=TODAY)).commits
    person = _author(env.vault)
    assert person and person != AGENT_NAME and not person.startswith("vaultsync api")

    memory.remember(env.cfg, SARAH, "Sarah Chen plays chess", actor=client("claude-code"))
    assert _author(env.vault) == "vaultsync api (claude-code)"
    memory.remember(env.cfg, SARAH, "Sarah Chen plays go", actor=client("<evil>\nname"))
    assert _author(env.vault) == "vaultsync api (evilname)"

    api = TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")
    assert api.post("/facts", json={"entity": SARAH, "fact": "x y"}, headers=AUTH).status_code == 201
    assert _author(env.vault) == "vaultsync api (unnamed)"


# -- conflicts ------------------------------------------------------------------------------------------------
def test_deleting_a_conflict_copy_is_reported_and_committed(env: Env, capsys) -> None:  # type: ignore[no-untyped-def]
    set_body(env.fact_note(SARAH_DIR, "sarah-chen-004"), "Sarah Chen wants the agenda a week ahead\n")
    env.agent_edit(SARAH, lambda facts: next(f for f in facts if f["id"] == "sarah-chen-004").update(fact="by Monday"))
    made = env.sync()
    assert made.exit_code == ExitCode.CONFLICTS and len(made.open_conflicts) == 1
    copy = made.open_conflicts[0]
    (env.vault / copy).unlink()
    capsys.readouterr()

    assert main(["sync", "--config", str(env.config_path)]) == 0

    out = capsys.readouterr().out
    assert "conflict resolved" in out and "nothing to commit" not in out
    assert git(env.vault, "status", "--porcelain") == ""
    assert copy not in git(env.vault, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert _author(env.vault) != AGENT_NAME, "the person resolved it"


def test_conflicts_a_remote_merge_made_stay_open_until_the_copy_is_deleted(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    m.bare.rename(tmp_path / "away.git")
    env.agent_edit(SARAH, lambda facts: next(f for f in facts if f["id"] == "sarah-chen-004").update(fact="Thursdays"))
    assert m.pass_().exit_code == ExitCode.NOT_PUSHED
    (tmp_path / "away.git").rename(m.bare)
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), "Fridays\n")
    m.laptop.backup()

    merged = m.pass_()

    copies = [c.copy_path for c in merged.conflicts if c.key.startswith("git:")]
    assert len(copies) == 1 and merged.exit_code == ExitCode.CONFLICTS
    assert copies[0] in merged.open_conflicts
    again = m.pass_(now=lambda: datetime(2026, 12, 1, 11, 0, 0))
    assert again.exit_code == ExitCode.CONFLICTS and again.open_conflicts == copies, again.to_json()

    (env.vault / copies[0]).unlink()
    resolved = m.pass_(now=lambda: datetime(2026, 12, 1, 12, 0, 0))

    assert resolved.exit_code == ExitCode.CLEAN and resolved.open_conflicts == [], resolved.to_json()
    assert any(c.what == "conflict resolved" for c in resolved.changes)
    assert m.server_clean() == []
    assert copies[0] not in git(env.vault, "ls-tree", "-r", "--name-only", "HEAD").splitlines()


# -- every pass obeys the guards -------------------------------------------------------------------------------
def test_the_janitor_s_pass_stops_on_a_missing_vault_folder_like_sync(env: Env) -> None:
    env.cfg = replace(env.cfg, janitor=replace(env.cfg.janitor, keep_daily_days=2))
    tracked = set(git(env.vault, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
    (env.vault / "2 Areas").rename(env.vault / "Areas (old)")

    result = janitor(env.cfg, today=TODAY)

    assert result.exit_code == ExitCode.SAFETY_STOP, result.to_json()
    assert result.sync is not None and "2 Areas" in result.sync.stopped
    assert set(git(env.vault, "ls-tree", "-r", "--name-only", "HEAD").splitlines()) == tracked
    (env.vault / "Areas (old)").rename(env.vault / "2 Areas")
    after = env.sync()
    assert after.exit_code == ExitCode.CLEAN, after.to_json()
    assert git(env.vault, "status", "--porcelain") == ""
    assert not (env.vault / "Daily/2026-11-27.md").exists()


def test_the_library_surface_is_one_object_with_a_method_per_use_case(env: Env) -> None:
    from vaultsync import api

    vault = api.Vault(env.cfg, client("a-script"))
    written = vault.remember(SARAH, "Sarah Chen plays the cello")
    assert written.fact is not None and vault.entity(SARAH).to_json()["name"] == "Sarah Chen"
    assert _author(env.vault) == "vaultsync api (a-script)"
    assert vault.status().exit_code == ExitCode.CLEAN
    assert {"Vault", "sync", "remember", "LockHeld", "VaultsyncError"} <= set(api.__all__)
    assert issubclass(api.LockHeld, api.VaultsyncError) and issubclass(api.Invalid, api.VaultsyncError)
