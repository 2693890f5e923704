"""Who said it: a program names, with each write, which of its agents wrote and from which conversation
(``X-Vaultsync-Agent``, ``X-Vaultsync-Session``); the commit carries them as git trailers, so several agents
sharing one vaultsync are told apart in git, and a conversation's writes can be found again.

Real files, real git; the HTTP API through its ASGI app.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from fastapi.testclient import TestClient
from helpers.server import AUTH, TOKEN
from helpers.twoway import SARAH, Env

from vaultsync.server.http import create_app


def _trailers(vault: Path, rev: str = "HEAD") -> dict[str, str]:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%(trailers:only,unfold)", rev], cwd=vault, capture_output=True, text=True
    ).stdout
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def _api(env: Env) -> TestClient:
    return TestClient(create_app(env.cfg, TOKEN), base_url="http://127.0.0.1")


def _as(agent: str, session: str) -> dict[str, str]:
    return {**AUTH, "X-Vaultsync-Client": "openclaw", "X-Vaultsync-Agent": agent, "X-Vaultsync-Session": session}


def test_each_write_commits_the_agent_and_session_it_was_sent_with(env: Env) -> None:
    api = _api(env)
    main = _as("main", "agent:main:telegram:direct:42")
    work = _as("work", "agent:work:slack:channel:c7")

    made = api.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen swims on Fridays"}, headers=main)
    assert made.status_code == 201, made.text
    assert env.git("log", "-1", "--format=%an").strip() == "vaultsync api (openclaw)"
    assert _trailers(env.vault) == {"Agent": "main", "Session": "agent:main:telegram:direct:42"}

    fact_id = made.json()["fact"]["id"]
    patched = api.patch(f"/facts/{fact_id}", json={"category": "habit"}, headers=work)
    assert patched.status_code == 200, patched.text
    assert _trailers(env.vault) == {"Agent": "work", "Session": "agent:work:slack:channel:c7"}

    replaced = api.post(f"/facts/{fact_id}/supersede", json={"fact": "Sarah Chen swims on Mondays"}, headers=main)
    assert replaced.status_code == 200, replaced.text
    assert _trailers(env.vault)["Agent"] == "main"

    gone = api.delete(f"/facts/{replaced.json()['fact']['id']}", headers=work)
    assert gone.status_code == 200, gone.text
    assert _trailers(env.vault)["Agent"] == "work"

    daily = api.post("/daily", json={"text": "Planned the swim meet"}, headers=main)
    assert daily.status_code == 201, daily.text
    assert _trailers(env.vault) == {"Agent": "main", "Session": "agent:main:telegram:direct:42"}


def test_a_write_without_them_carries_no_trailers_and_odd_values_stay_on_one_line(env: Env) -> None:
    api = _api(env)

    plain = api.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen reads on trains"}, headers=AUTH)
    assert plain.status_code == 201, plain.text
    assert _trailers(env.vault) == {}

    odd = {**AUTH, "X-Vaultsync-Agent": "  main\tbot ", "X-Vaultsync-Session": "s" * 300}
    made = api.post("/facts", json={"entity": SARAH, "fact": "Sarah Chen reads on planes"}, headers=odd)
    assert made.status_code == 201, made.text
    assert _trailers(env.vault) == {"Agent": "main bot", "Session": "s" * 200}
