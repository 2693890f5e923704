"""A real ``vaultsync serve`` subprocess on 127.0.0.1: concurrent writes, a write meeting a CLI pass, the event
stream, the refusal to bind a public address unasked, and a plain sync that never loads the server's libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from helpers.server import AUTH, TOKEN, running_server
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync.state.files import StateFiles


@pytest.fixture
def server(env: Env):  # type: ignore[no-untyped-def]
    with running_server(env.config_path) as url:
        yield url


def test_twenty_concurrent_remembers_all_land_with_distinct_ids(server: str, env: Env) -> None:
    def one(n: int) -> httpx.Response:
        body = {"entity": SARAH, "fact": f"Parallel fact number {n}"}
        return httpx.post(f"{server}/facts", json=body, headers=AUTH, timeout=300)

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(one, range(20)))
    assert [r.status_code for r in answers] == [201] * 20, [r.text for r in answers if r.status_code != 201]
    ids = [r.json()["fact"]["id"] for r in answers]
    assert len(set(ids)) == 20
    held = {f["id"]: f["fact"] for f in env.facts(SARAH)}
    assert {held[i] for i in ids} == {f"Parallel fact number {n}" for n in range(20)}
    assert all((env.vault / f"{SARAH_DIR}/facts/{i}.md").is_file() for i in ids)
    status = subprocess.run(["git", "-C", str(env.vault), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout.strip() == ""


def test_a_remember_while_a_cli_sync_runs_both_land(server: str, env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts[0].update(category="changed by the agent"))
    lock = StateFiles(env.cfg.state_dir).lock
    cli = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The lock file names the last holder: once it names the CLI, the CLI holds the lock or already did.
    while not (lock.exists() and lock.read_text().strip() == str(cli.pid)) and cli.poll() is None:
        time.sleep(0.005)
    r = httpx.post(f"{server}/facts", json={"entity": SARAH, "fact": "Said during a sync"}, headers=AUTH, timeout=300)
    out, err = cli.communicate(timeout=300)
    assert cli.returncode == 0, (out, err)
    assert r.status_code == 201, r.text
    assert env.fact(SARAH, "sarah-chen-001")["category"] == "changed by the agent"
    note = (env.vault / f"{SARAH_DIR}/facts/sarah-chen-001.md").read_text()
    assert "changed by the agent" in note
    assert (env.vault / r.json()["fact"]["note"]).is_file()


def test_events_tell_a_pass_started_and_finished(server: str) -> None:
    with httpx.stream("GET", f"{server}/events?limit=2", headers=AUTH, timeout=120) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        sync = httpx.post(f"{server}/sync", headers=AUTH, timeout=300)
        assert sync.status_code == 200
        frames = [line for line in lines if line.startswith(("event:", "data:"))]
    assert frames[0] == "event: started" and json.loads(frames[1][5:]) == {"kind": "sync"}
    assert frames[2] == "event: finished" and "summary" in json.loads(frames[3][5:])


def test_a_pass_of_this_server_is_never_told_again_as_a_run_but_another_programs_pass_is(env: Env, server: str) -> None:
    """The record of runs holds this server's passes too; a stream tells them once, as started and finished."""
    with httpx.stream("GET", f"{server}/events?limit=3", headers=AUTH, timeout=120) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": connected"
        assert httpx.post(f"{server}/sync", headers=AUTH, timeout=300).status_code == 200
        time.sleep(2.5)  # two looks at the record of runs: the server's own record is there by now
        other = subprocess.run(
            [sys.executable, "-m", "vaultsync.cli", "sync", "--config", str(env.config_path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert other.returncode == 0, other.stderr
        frames = [line for line in lines if line.startswith(("event:", "data:"))]
    assert frames[0::2] == ["event: started", "event: finished", "event: run"]
    told = json.loads(frames[5][5:])
    recorded = json.loads((env.cfg.state_dir / "runs.json").read_text(encoding="utf-8"))["runs"]
    assert told == recorded[-1] and told != recorded[-2]  # the other program's pass, not this server's


def test_every_route_wants_the_token_over_http(server: str) -> None:
    for method, path in [("GET", "/status"), ("POST", "/sync"), ("GET", "/entities"), ("DELETE", "/facts/x")]:
        assert httpx.request(method, f"{server}{path}").status_code == 401
    assert httpx.get(f"{server}/health").status_code == 200
    assert httpx.get(f"{server}/health", headers={"Host": "rebound.example"}).status_code == 400


def test_serve_refuses_a_public_address_without_the_flag(env: Env) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", "serve", "--config", str(env.config_path), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        env={**os.environ, "VAULTSYNC_TOKEN": TOKEN},
        timeout=60,
    )
    assert done.returncode == 2 and "--allow-remote" in done.stderr


def test_a_plain_sync_loads_no_server_library(env: Env) -> None:
    code = (
        "import sys; from vaultsync.cli import main; rc = main(['sync', '--config', sys.argv[1]]);"
        "heavy = [m for m in ('fastapi', 'uvicorn', 'mcp', 'starlette', 'pydantic') if m in sys.modules];"
        "print('HEAVY', heavy); sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(env.config_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout


def test_the_config_path_as_spelled_does_not_cost_a_full_pass(env: Env) -> None:
    def sync(config: str) -> dict:  # type: ignore[type-arg]
        done = subprocess.run(
            [sys.executable, "-m", "vaultsync.cli", "sync", "--json", "--config", config],
            capture_output=True,
            text=True,
            cwd=env.config_path.parent,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    sync(str(env.config_path))
    assert sync(env.config_path.name)["quick"] is True


def test_a_new_entity_whose_name_leaves_no_room_for_its_fact_ids_is_422(server: str, env: Env) -> None:
    """A 117-byte company name was made (201) and its first fact, ``<name>-001``, then skipped by every pass."""
    long = "深圳市前海微众银行股份有限公司上海分公司数据科学与人工智能研究院区块链部技术组"  # 117 bytes
    head = env.head()
    body = {"entity": f"areas/companies/{long}", "fact": "A bank in Shenzhen", "create": True}
    r = httpx.post(f"{server}/facts", json=body, headers=AUTH, timeout=300)
    assert r.status_code == 422, r.text
    [error] = r.json()["detail"]
    assert error["loc"][-1] == "entity" and "at most 108 bytes" in error["msg"] and "shorter slug" in error["msg"]
    assert not (env.life / "areas/companies" / long).exists() and env.head() == head
    body["entity"] = f"areas/companies/{long[:36]}"
    r = httpx.post(f"{server}/facts", json=body, headers=AUTH, timeout=300)
    assert r.status_code == 201, r.text
    assert (env.vault / r.json()["fact"]["note"]).is_file()
    r = httpx.post(f"{server}/sync", headers=AUTH, timeout=300)
    assert r.status_code == 200 and r.json()["exit_code"] == 0, r.text
