"""A vault that meets other devices through a git remote: the server's pass fetches the laptop's commits, merges
them without touching the work tree until the result is whole, carries them into the memory tree, and pushes.

Every test has a real bare repository and two clones: the server's vault (memory tree + vaultsync) and the
laptop's (plain git commits as obsidian-git makes them, pulled with merge or rebase).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_remote import PERSON, git, meet
from helpers_twoway import SARAH, SARAH_DIR, Env, body_of, set_body

from vaultsync.model import ExitCode


@pytest.mark.parametrize("pull", ["merge", "rebase"])
def test_a_fact_edited_on_the_laptop_reaches_items_json_and_the_agent_s_work_goes_back(
    env: Env, tmp_path: Path, pull: str
) -> None:
    m = meet(env, tmp_path, pull)
    text = "Sarah Chen wants the agenda two working days ahead"
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), text + "\n")
    m.laptop.backup()
    laptop_commit = m.laptop.head()
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-090", "fact": "Sarah moved desks"}))

    report = m.pass_()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == text
    assert report.remote and report.remote.fetched and report.remote.pushed
    assert m.remote_head() == env.head()
    assert git(env.vault, "log", "-1", "--format=%an <%ae>", laptop_commit).strip() == f"{PERSON[0]} <{PERSON[1]}>"
    assert m.server_clean() == []
    m.laptop.sync()
    assert body_of(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-090.md")).strip() == "Sarah moved desks"
    assert m.pass_().exit_code == ExitCode.CLEAN and m.remote_head() == env.head()
