"""``vaultsync log`` says which agent and which conversation wrote a change, from the commit's trailers
(``Agent: main``, ``Session: ...``), in its table and in ``--json``; a change with none says nothing more."""

from __future__ import annotations

import json

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync import cli
from vaultsync.app import memory
from vaultsync.model import client


def test_log_shows_the_agent_and_session_of_each_write(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(env.config_path)
    main = memory.remember(env.cfg, SARAH, "Sarah Chen swims on Fridays", actor=client("openclaw", "main", "s-1"))
    work = memory.remember(env.cfg, SARAH, "Sarah Chen likes jazz", actor=client("openclaw", "work", "s-2"))
    assert main.fact and work.fact

    assert cli.main(["log", SARAH, "--json", "-c", config]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    by_note = {path: change for change in changes for path in change["paths"]}
    first, second = (by_note[f"{SARAH_DIR}/facts/{f.id}.md"] for f in (main.fact, work.fact))
    assert (first["who"], first["agent"], first["session"]) == ("vaultsync api (openclaw)", "main", "s-1")
    assert (second["who"], second["agent"], second["session"]) == ("vaultsync api (openclaw)", "work", "s-2")
    assert changes[-1]["agent"] is None and changes[-1]["session"] is None  # the first import names no agent

    assert cli.main(["log", SARAH, "-c", config]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0][1] == "vaultsync api (openclaw) [work, session s-2]"
    assert "vaultsync api (openclaw) [main, session s-1]" in {row[1] for row in rows}
    assert rows[-1][1] == "vaultsync agent"
