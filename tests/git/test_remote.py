"""A vault that meets other devices through a git remote: the server's pass fetches the laptop's commits, merges
them without touching the work tree until the result is whole, carries them into the memory tree, and pushes.

Every test has a real bare repository and two clones: the server's vault (memory tree + vaultsync) and the
laptop's (plain git commits as obsidian-git makes them, pulled with merge or rebase).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.remote import PERSON, git, meet
from helpers.twoway import EXAMPLE, SARAH, SARAH_DIR, Env, body_of, isolate_git, set_body

from vaultsync import config as configmod
from vaultsync.app.sync import status
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


def test_both_sides_change_the_same_fact_the_person_s_version_is_kept_and_both_converge(
    env: Env, tmp_path: Path
) -> None:
    m = meet(env, tmp_path)
    agent_text, person_text = "Sarah Chen prefers agendas on paper", "Sarah Chen prefers agendas by email"
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), person_text + "\n")
    m.laptop.backup()
    env.agent_edit(SARAH, lambda facts: next(f for f in facts if f["id"] == "sarah-chen-004").update(fact=agent_text))

    first = m.pass_()

    assert first.exit_code == ExitCode.CONFLICTS, first.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == agent_text
    copies = list((env.vault / SARAH_DIR / "facts").glob("sarah-chen-004.vaultsync-conflict-*.md"))
    assert len(copies) == 1 and person_text in copies[0].read_text(encoding="utf-8")
    assert m.remote_head() == env.head()

    # The person merges on the laptop: takes their wording into the note and deletes the copy.
    m.laptop.sync()
    laptop_copy = m.laptop.note(copies[0].relative_to(env.vault).as_posix())
    assert laptop_copy.is_file()
    laptop_copy.unlink()
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), person_text + "\n")
    m.laptop.backup("vault backup: resolved")

    second = m.pass_()
    assert second.exit_code == ExitCode.CLEAN, second.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == person_text
    m.laptop.sync()
    assert m.laptop.head() == env.head() == m.remote_head()
    assert git(m.laptop.root, "rev-parse", "HEAD^{tree}") == git(env.vault, "rev-parse", "HEAD^{tree}")


def test_a_git_level_clash_keeps_both_versions_without_conflict_markers(env: Env, tmp_path: Path) -> None:
    """The server committed a note it could not push; the laptop changed the same note meanwhile."""
    m = meet(env, tmp_path)
    hidden = tmp_path / "remote-away.git"
    m.bare.rename(hidden)
    agent_text = "Sarah Chen moved the weekly sync to Thursdays"
    env.agent_edit(SARAH, lambda facts: next(f for f in facts if f["id"] == "sarah-chen-004").update(fact=agent_text))
    offline = m.pass_()
    assert offline.exit_code == ExitCode.NOT_PUSHED, offline.to_json()
    hidden.rename(m.bare)
    person_text = "Sarah Chen moved the weekly sync to Fridays"
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), person_text + "\n")
    m.laptop.backup()

    report = m.pass_()

    assert report.exit_code == ExitCode.CONFLICTS, report.to_json()
    note = env.vault / SARAH_DIR / "facts" / "sarah-chen-004.md"
    assert body_of(note).strip() == agent_text and "<<<<<<<" not in note.read_text(encoding="utf-8")
    git_copies = [c for c in report.conflicts if c.key.startswith("git:")]
    assert len(git_copies) == 1 and person_text in (env.vault / git_copies[0].copy_path).read_text(encoding="utf-8")
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == agent_text
    assert m.server_clean() == [] and m.remote_head() == env.head()
    assert len(git(env.vault, "log", "-1", "--format=%P", report.remote.integrated[0]).split()) == 2

    m.laptop.sync()
    (m.laptop.root / git_copies[0].copy_path).unlink()
    m.laptop.backup("vault backup: resolved")
    assert m.pass_().exit_code == ExitCode.CLEAN
    m.laptop.sync()
    assert git(m.laptop.root, "rev-parse", "HEAD^{tree}") == git(env.vault, "rev-parse", "HEAD^{tree}")


def test_a_folder_deleted_on_the_laptop_meets_the_mass_delete_guard(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    # A lower share than the default, so that one entity's folder trips the guard in the small example.
    text = env.config_path.read_text(encoding="utf-8").replace("max_delete_share = 0.25", "max_delete_share = 0.05")
    env.config_path.write_text(text, encoding="utf-8")
    env.cfg = configmod.load(env.config_path)
    items_before = env.items_path(SARAH).read_bytes()
    git(m.laptop.root, "rm", "-r", "-q", SARAH_DIR)
    m.laptop.backup()
    remote_before = m.remote_head()

    held = m.pass_()

    # The shrink guard (once the mass-delete stop) holds the deletion: the memory keeps Sarah, and nothing of
    # the pass's goes to the remote, which already has the laptop's commit.
    assert held.exit_code == ExitCode.HELD, held.to_json()
    assert [h.path for h in held.held] == [SARAH_DIR] and held.held[0].writer == "person"
    assert env.items_path(SARAH).read_bytes() == items_before
    assert m.remote_head() == remote_before
    confirmed = m.pass_(accept=frozenset({SARAH_DIR}))
    assert confirmed.exit_code == ExitCode.CLEAN, confirmed.to_json()
    assert not env.items_path(SARAH).exists()
    assert m.remote_head() == env.head()


def test_a_remote_that_moves_during_the_pass_is_merged_and_pushed_again(env: Env, tmp_path: Path) -> None:
    """The server's pre-push hook makes the laptop push first, once: the server's push is refused and retried."""
    m = meet(env, tmp_path)
    fact = f"{SARAH_DIR}/facts/sarah-chen-002.md"
    text = "Sarah Chen asked for the deck in advance"
    marker = tmp_path / "moved-once"
    hook = env.vault / ".git" / "hooks" / "pre-push"
    hook.write_text(
        "#!/bin/sh\n"
        f"[ -e '{marker}' ] && exit 0\n"
        f"touch '{marker}'\n"
        "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f"cd '{m.laptop.root}' || exit 1\n"
        f"python3 - <<'PY'\n"
        f"from pathlib import Path\n"
        f"p = Path('{fact}')\n"
        f"head, _, body = p.read_text().rpartition('---\\n')\n"
        f"p.write_text(head + '---\\n{text}\\n')\n"
        "PY\n"
        "git commit -q -am 'vault backup: from the laptop' && git push -q origin main\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-091", "fact": "Sarah is in Oslo"}))

    report = m.pass_()

    assert marker.exists()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert report.remote and report.remote.pushed and m.remote_head() == env.head()
    subjects = git(env.vault, "log", "--format=%s", "-3").splitlines()
    assert subjects[0] == "vaultsync: merge origin/main" and "vault backup: from the laptop" in subjects
    assert body_of(env.vault / fact).strip() == text  # in the vault; the next pass takes it into memory
    assert m.pass_().exit_code == ExitCode.CLEAN
    assert env.fact(SARAH, "sarah-chen-002")["fact"] == text


def test_a_missing_remote_leaves_the_pass_done_and_the_push_for_later(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    hidden = tmp_path / "remote-away.git"
    m.bare.rename(hidden)
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-092", "fact": "Sarah got a dog"}))

    report = m.pass_()

    assert report.exit_code == ExitCode.NOT_PUSHED, report.to_json()
    assert report.commits and (env.vault / SARAH_DIR / "facts" / "sarah-chen-092.md").is_file()
    assert report.remote and report.remote.waiting_since and report.remote.ahead >= 1
    looked = status(env.cfg)
    assert looked.exit_code == ExitCode.NOT_PUSHED
    assert looked.remote and "commit ahead, waiting to push since" in looked.remote.line()
    hidden.rename(m.bare)
    later = m.pass_()
    assert later.exit_code == ExitCode.CLEAN and later.remote and later.remote.pushed
    assert m.remote_head() == env.head() and not later.remote.waiting_since


@pytest.mark.parametrize(
    ("hook", "reason"), [("pre-receive", "pre-receive hook declined"), ("update", "hook declined")]
)
def test_a_remote_that_declines_the_push_is_told_apart_from_one_that_moved(
    env: Env, tmp_path: Path, hook: str, reason: str
) -> None:
    """A protected branch or a hook refuses every push: the pass says so once, in git's and the remote's words,
    with the fix, instead of fetching and pushing again as for a remote that moved."""
    m = meet(env, tmp_path)
    remote_before = m.remote_head()
    tries = tmp_path / "push-tries"
    declining = m.bare / "hooks" / hook
    declining.write_text(
        f"#!/bin/sh\necho try >> '{tries}'\necho 'GL-HOOK-ERR: You are not allowed to push code to protected "
        "branches on this project.' >&2\nexit 1\n",
        encoding="utf-8",
    )
    declining.chmod(0o755)
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-095", "fact": "Sarah sails"}))

    report = m.pass_()

    assert report.exit_code == ExitCode.NOT_PUSHED, report.to_json()
    assert tries.read_text(encoding="utf-8").splitlines() == ["try"]  # one push, no fetch-and-retry round
    assert m.remote_head() == remote_before and report.commits
    assert report.remote and not report.remote.pushed
    why = report.remote.why
    assert f"push to origin/main refused by the remote: {reason} " in why, why
    assert "You are not allowed to push code to protected branches on this project." in why, why
    assert "pushing again will not help" in why and "kept moving" not in why, why
    looked = _cli("status", "--config", str(env.config_path))
    assert looked.returncode == ExitCode.NOT_PUSHED and reason in looked.stdout, looked.stdout + looked.stderr
    declining.unlink()
    later = m.pass_()
    assert later.exit_code == ExitCode.CLEAN and later.remote and later.remote.pushed, later.to_json()
    assert m.remote_head() == env.head() and not later.remote.waiting_since


def test_a_secret_in_a_commit_another_tool_made_holds_the_push_back(env: Env, tmp_path: Path) -> None:
    m = meet(env, tmp_path)
    remote_before = m.remote_head()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (env.vault / "scratch.md").write_text(f"token {token}\n", encoding="utf-8")
    git(env.vault, "add", "scratch.md")
    git(env.vault, "-c", "user.name=Tool", "-c", "user.email=tool@x", "commit", "-q", "-m", "vault backup")

    report = m.pass_()

    assert report.exit_code == ExitCode.NOT_PUSHED, report.to_json()
    assert m.remote_head() == remote_before
    held = [p for p in report.problems if "a secret held the push back" in p.message]
    assert held and held[0].path == "scratch.md" and token not in held[0].message
    assert report.remote and "secret" in report.remote.why


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vaultsync.cli", *args], capture_output=True, text=True, timeout=300)


def test_init_remote_pushes_on_the_first_pass_and_init_clone_joins_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch.setenv, tmp_path / "git-env")
    shutil.copytree(EXAMPLE, tmp_path / "mem")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    roots = ["--workspace", str(tmp_path / "mem" / "workspace"), "--life", str(tmp_path / "mem" / "life")]
    config = tmp_path / "server.toml"
    made = _cli("init", *roots, "--vault", str(tmp_path / "vault"), "--remote", str(bare), "--config", str(config))
    assert made.returncode == 0 and "added the remote origin" in made.stdout, made.stderr
    assert '[remote]\nname = "origin"\nbranch = "main"' in config.read_text(encoding="utf-8")
    first = _cli("sync", "--config", str(config))
    assert first.returncode == 0 and "remote origin/main: 0 ahead, 0 behind (pushed)" in first.stdout, first
    assert git(bare, "rev-parse", "main") == git(tmp_path / "vault", "rev-parse", "HEAD")

    shutil.copytree(EXAMPLE, tmp_path / "mem2")
    roots2 = ["--workspace", str(tmp_path / "mem2" / "workspace"), "--life", str(tmp_path / "mem2" / "life")]
    config2 = tmp_path / "second.toml"
    joined = _cli("init", *roots2, "--vault", str(tmp_path / "vault2"), "--clone", str(bare), "--config", str(config2))
    assert joined.returncode == 0 and "cloned the vault" in joined.stdout, joined.stderr
    assert (tmp_path / "vault2" / SARAH_DIR / "sarah-chen.md").is_file()
    assert _cli("sync", "--config", str(config2)).returncode == 0
    refused = _cli(
        "init", *roots2, "--vault", str(tmp_path / "vault2"), "--clone", str(bare), "--config", str(tmp_path / "x.toml")
    )
    assert refused.returncode == ExitCode.USAGE and "missing or empty" in refused.stderr

    # The remote goes away: the pass commits, exits 6, and status says what waits since when.
    bare.rename(tmp_path / "away.git")
    (tmp_path / "mem" / "workspace" / "HEARTBEAT.md").write_text("- check the printer\n", encoding="utf-8")
    offline = _cli("sync", "--config", str(config))
    assert offline.returncode == ExitCode.NOT_PUSHED and "waiting to push since" in offline.stdout, offline
    looked = _cli("status", "--config", str(config))
    assert looked.returncode == ExitCode.NOT_PUSHED
    assert "remote origin/main: 1 commit ahead, waiting to push since" in looked.stdout, looked.stdout


def test_a_password_in_the_remote_s_url_never_reaches_the_output(env: Env, tmp_path: Path) -> None:
    git(env.vault, "remote", "add", "origin", "http://nora:hunter2secret@127.0.0.1:9/memory.git")
    env.config_path.write_text(env.config_path.read_text(encoding="utf-8") + '\n[remote]\nname = "origin"\n')
    env.cfg = configmod.load(env.config_path)
    env.agent_edit(SARAH, lambda facts: facts.append({**facts[0], "id": "sarah-chen-094", "fact": "Sarah runs"}))
    done = _cli("sync", "--json", "--config", str(env.config_path))
    assert done.returncode == ExitCode.NOT_PUSHED, done.stdout + done.stderr
    assert "hunter2secret" not in done.stdout + done.stderr
    assert json.loads(done.stdout)["remote"]["waiting_since"]


def test_a_note_edited_on_the_server_and_on_the_laptop_keeps_both(env: Env, tmp_path: Path) -> None:
    """The server's note has an edit not yet committed when the laptop's change to it comes in: the work tree
    keeps the server's edit, and the laptop's version is kept beside it, committed and pushed."""
    m = meet(env, tmp_path)
    laptop_text, server_text = "Sarah Chen chairs the board from March", "Sarah Chen chairs the board from April"
    set_body(m.laptop.note(f"{SARAH_DIR}/facts/sarah-chen-004.md"), laptop_text + "\n")
    m.laptop.backup()
    set_body(env.vault / SARAH_DIR / "facts" / "sarah-chen-004.md", server_text + "\n")

    report = m.pass_()

    assert report.exit_code == ExitCode.CONFLICTS, report.to_json()
    assert env.fact(SARAH, "sarah-chen-004")["fact"] == server_text
    kept = [c for c in report.conflicts if c.key == f"git:{SARAH_DIR}/facts/sarah-chen-004.md"]
    assert len(kept) == 1 and laptop_text in (env.vault / kept[0].copy_path).read_text(encoding="utf-8")
    assert m.server_clean() == [] and m.remote_head() == env.head()
    m.laptop.sync()
    assert (m.laptop.root / kept[0].copy_path).is_file()


def test_a_secret_removed_on_the_laptop_is_a_removal_not_a_conflict(env: Env, tmp_path: Path) -> None:
    """The person pastes a token into today's note on the laptop, then deletes it. Meanwhile the server's note,
    held out of git for the secret, gained the agent's line: the removal merges into it, the secret leaves both
    the note and the agent's daily note, and the agent's lines reach the laptop."""
    m = meet(env, tmp_path)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    note = m.laptop.note("Daily/2026-12-01.md")
    before = note.read_text(encoding="utf-8")
    note.write_text(before + f"- token {token}\n", encoding="utf-8")
    m.laptop.backup()
    m.pass_()
    daily = env.mem_file("memory/2026-12-01.md")
    daily.write_text(daily.read_text(encoding="utf-8") + "- agent: line A\n", encoding="utf-8")
    held = m.pass_()
    assert any("holds a secret" in p.message for p in held.problems)
    note.write_text(before, encoding="utf-8")
    m.laptop.backup("vault backup: token removed")
    daily.write_text(daily.read_text(encoding="utf-8") + "- agent: line B\n", encoding="utf-8")

    report = m.pass_()

    assert report.exit_code == ExitCode.CLEAN and not report.conflicts, report.to_json()
    assert token not in daily.read_text(encoding="utf-8")
    assert token not in (env.vault / "Daily/2026-12-01.md").read_text(encoding="utf-8")
    assert not list((env.vault / "Daily").glob("*conflict*"))
    assert m.server_clean() == [] and m.remote_head() == env.head()
    m.laptop.sync()
    assert "- agent: line A\n- agent: line B\n" in note.read_text(encoding="utf-8")
