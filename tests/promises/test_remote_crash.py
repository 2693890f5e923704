"""A pass with a remote killed with SIGKILL during the fetch, the merge, the work tree's update or the push: the
next pass recovers without a person's git command, loses no edit and leaves no conflict marker in a note.

The killed pass is the real ``python -m vaultsync.cli sync`` in a child process that kills its own process group
right before a chosen git command or file rename (``helpers.crash.run_sync_crashing_at``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.crash import MUTATIONS, RENAMES, fsck, git_env, run_sync_crashing_at
from helpers.remote import git, meet
from helpers.twoway import SARAH, SARAH_DIR, Env, body_of, set_body

from vaultsync.model import ExitCode

PERSON_TEXT = "Sarah Chen wants the agenda two working days ahead"
AGENT_FACT = {"id": "sarah-chen-093", "fact": "Sarah Chen booked the Lisbon offsite"}
KILLS = {
    "before the fetch": (("subprocess.Popen",), "'fetch'"),
    "before HEAD moves to the merge": (("subprocess.Popen",), "'update-ref'"),
    "while the work tree follows the merge": (RENAMES, "sarah-chen-004.md"),
    "before the push": (("subprocess.Popen",), "'push'"),
}


@pytest.mark.parametrize("moment", list(KILLS))
def test_a_pass_killed_during_fetch_merge_or_push_is_recovered_by_the_next(
    env: Env, tmp_path: Path, moment: str
) -> None:
    m = meet(env, tmp_path)
    # The server has a commit the remote lacks (another tool's), so the pass makes a real merge, not a fast-forward.
    (env.vault / "Inbox.md").write_text("a note the person wrote on the server\n", encoding="utf-8")
    git(env.vault, "add", "Inbox.md")
    git(env.vault, "-c", "user.name=Nora", "-c", "user.email=nora@server", "commit", "-q", "-m", "inbox")
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), PERSON_TEXT + "\n")
    m.laptop.backup()
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], **AGENT_FACT}))

    events, needle = KILLS[moment]
    killed = run_sync_crashing_at(env.config_path, git_env(tmp_path / "child-git"), events, 1, needle=needle)
    assert killed.killed, (killed.returncode, killed.stdout, killed.stderr)
    assert set(events) <= set(MUTATIONS)

    report = m.pass_()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == PERSON_TEXT
    assert body_of(env.vault / SARAH_DIR / "facts" / "sarah-chen-093.md").strip() == AGENT_FACT["fact"]
    assert (env.vault / "Inbox.md").is_file()
    for note in env.vault.rglob("*.md"):
        assert "<<<<<<<" not in note.read_text(encoding="utf-8"), note
    assert m.server_clean() == [] and not fsck(env.vault)
    assert not (env.cfg.state_dir / "merging.json").exists()
    assert m.remote_head() == env.head()
    quiet = m.pass_()
    assert quiet.exit_code == ExitCode.CLEAN and not quiet.commits and not quiet.actions
    m.laptop.sync()
    assert git(m.laptop.root, "rev-parse", "HEAD^{tree}") == git(env.vault, "rev-parse", "HEAD^{tree}")
