"""End-to-end tests for the engine foundation: ``init``, the first render of the example tree, no-op passes,
dry runs, commits, the run lock and exit codes.

Every test works on a copy of ``vault-example/`` in tmp_path, with a real vault git repository and git's global
and system config switched off, so results do not depend on the machine's git identity.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.e2e import (
    EXAMPLE,
    PACKAGE_TEMPLATES,
    Env,
    all_committed_paths,
    author,
    commit_count,
    commit_files,
    files_under,
    git,
    head,
    make_env,
    message,
    split_note,
    staged,
    tree_bytes,
    tree_stat,
)

from vaultsync import cli
from vaultsync import config as configmod
from vaultsync.app.init import init_vault
from vaultsync.app.sync import status
from vaultsync.engine.run import run_pass
from vaultsync.errors import ConfigError, LockHeld
from vaultsync.model import Conflict, ExitCode, Problem, Report, Severity, SideChange
from vaultsync.options import PassOptions
from vaultsync.state import runs
from vaultsync.vault.notes import VIEW_MARKER

AGENT = "vaultsync agent <agent@vaultsync.invalid>"
# What init writes into the vault (besides the repository itself).
INIT_FILES = [
    ".gitignore",
    ".obsidian/daily-notes.json",
    ".obsidian/templates.json",
    ".obsidian/types.json",
    "Memory.base",
    "Templates/Daily.md",
    "Templates/Entity.md",
    "Templates/Fact.md",
]
NOT_MANAGED = (".git", ".vaultsync", ".obsidian", "Templates", "Memory.base", ".gitignore")


def _facts(folder: str, stem: str, count: int) -> set[str]:
    return {f"{folder}/facts/{stem}-{n:03d}.md" for n in range(1, count + 1)}


# Every note the first pass over the example renders, except acme-corp's four id-less facts (hashed names).
EXPECTED_NOTES = {
    "1 Projects/project-atlas/project-atlas.md",
    *_facts("1 Projects/project-atlas", "atlas", 6),
    "2 Areas/companies/acme-corp/acme-corp.md",
    "2 Areas/people/li-wei/li-wei.md",
    *_facts("2 Areas/people/li-wei", "li-wei", 5),
    "2 Areas/people/miguel-ortiz/miguel-ortiz.md",
    *_facts("2 Areas/people/miguel-ortiz", "miguel-ortiz", 4),
    "2 Areas/people/sarah-chen/sarah-chen.md",
    *_facts("2 Areas/people/sarah-chen", "sarah-chen", 6),
    "3 Resources/reading-list/reading-list.md",
    "3 Resources/agent/MEMORY.md",
    "3 Resources/agent/HEARTBEAT.md",
    "3 Resources/agent/life/index.md",
    "3 Resources/agent/memory/model-usage-log.md",
    "4 Archives/agent/2026-10.md",
    "4 Archives/old-apartment/old-apartment.md",
    *_facts("4 Archives/old-apartment", "old-apartment", 5),
    *{f"Daily/2026-11-{d}.md" for d in (27, 28, 29, 30)},
    "Daily/2026-12-01.md",
}
ACME_FACTS = "2 Areas/companies/acme-corp/facts"
ACME_NOTE = re.compile(r"^2 Areas/companies/acme-corp/facts/acme-corp-[0-9a-f]{6}\.md$")

SARAH_NOTE = "2 Areas/people/sarah-chen/sarah-chen.md"
SARAH_FRONTMATTER = """\
---
kind: people
aliases:
  - Sarah Chen
tags:
  - memory/person
facts_active: 5
facts_superseded: 1
related:
  - "[[acme-corp|Acme Corp]]"
  - "[[miguel-ortiz|Miguel Ortiz]]"
  - "[[project-atlas|Project Atlas]]"
updated: 2026-11-24
---
"""
SARAH_002 = """\
---
id: sarah-chen-002
category: schedule
timestamp: 2026-10-06
source: memory/2026-10-06.md
status: superseded
supersededBy: "[[sarah-chen-005]]"
entity: "[[sarah-chen|Sarah Chen]]"
mentions:
  - "[[project-atlas|Project Atlas]]"
daily: "2026-10-06"
---
Sarah Chen runs the weekly Project Atlas check-in on Tuesdays at 10:00
"""
SARAH_001 = """\
---
id: sarah-chen-001
category: context
timestamp: 2026-10-01
source: conversation
status: active
entity: "[[sarah-chen|Sarah Chen]]"
mentions:
  - "[[acme-corp|Acme Corp]]"
---
Sarah Chen is a hardware engineering manager at Acme Corp
"""
ACME_SUPERSEDED = """\
---
source: kickoff 2026-10-06
timestamp: 2026-10-06
status: superseded
category: structure
supersededBy: Replaced after the Q4 reorg
entity: "[[acme-corp|Acme Corp]]"
mentions:
  - "[[project-atlas|Project Atlas]]"
---
Project Atlas sits in Acme Corp's Facilities Innovation group
"""
NEW_FACT = {
    "id": "sarah-chen-007",
    "fact": "Sarah Chen wants the Project Atlas readout deck by 2026-12-08",
    "category": "milestone",
    "timestamp": "2026-12-01",
    "source": "conversation",
    "status": "active",
    "supersededBy": None,
}
SARAH_007 = """\
---
id: sarah-chen-007
category: milestone
timestamp: 2026-12-01
source: conversation
status: active
entity: "[[sarah-chen|Sarah Chen]]"
mentions:
  - "[[project-atlas|Project Atlas]]"
---
Sarah Chen wants the Project Atlas readout deck by 2026-12-08
"""
DAILY_LINE = "- 17:00 Sarah Chen asked for the Atlas readout deck by 2026-12-08\n"


# -- fixtures and small helpers ------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("VAULTSYNC_CONFIG", raising=False)
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_DIR"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    """The example tree copied, the vault initialised, no pass run yet."""
    e = make_env(tmp_path / "sandbox")
    e.init()
    return e


@pytest.fixture
def synced(env: Env) -> Env:
    """``env`` after one clean pass."""
    report = run_pass(env.cfg(), PassOptions())
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert [p for p in report.problems if p.severity is not Severity.NOTE] == []
    return env


def managed(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in files_under(vault, NOT_MANAGED)}


def read(env: Env, rel: str) -> str:
    return (env.vault / rel).read_text(encoding="utf-8")


def acme_notes(env: Env) -> dict[str, str]:
    """Body (fact text) -> vault path of each acme-corp fact note."""
    out = {}
    for path in sorted((env.vault / ACME_FACTS).iterdir()):
        _, body = split_note(path.read_text(encoding="utf-8"))
        out[body] = path.relative_to(env.vault).as_posix()
    return out


def init_cli(workspace: Path, life: Path, vault: Path, config_path: Path) -> int:
    args = ["--workspace", str(workspace), "--life", str(life), "--vault", str(vault), "--config", str(config_path)]
    return cli.main(["init", *args])


def sync_cli(env: Env, *flags: str) -> int:
    return cli.main(["sync", *flags, "--config", str(env.config_path)])


def agent_appends_fact_and_daily_line(env: Env) -> None:
    items = env.life / "areas/people/sarah-chen/items.json"
    facts = json.loads(items.read_text(encoding="utf-8"))
    facts.append(NEW_FACT)
    items.write_text(json.dumps(facts, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with (env.workspace / "memory/2026-12-01.md").open("a", encoding="utf-8") as handle:
        handle.write(DAILY_LINE)


# -- 1. init -------------------------------------------------------------------------------------------------
def test_init_creates_config_templates_settings_and_one_commit(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    e = make_env(tmp_path / "sandbox")
    rc = init_cli(e.workspace, e.life, e.vault, e.config_path)
    assert rc == 0
    out = capsys.readouterr().out
    assert f"config: {e.config_path}" in out
    assert "created a git repository in the vault" in out

    cfg = configmod.load(e.config_path)
    assert (cfg.workspace, cfg.life, cfg.vault) == (e.workspace.resolve(), e.life.resolve(), e.vault.resolve())
    assert cfg.layout == configmod.Layout(fact_text_property=True)  # a new vault shows fact text in Bases
    assert (cfg.git.agent_name, cfg.git.agent_email) == ("vaultsync agent", "agent@vaultsync.invalid")
    assert cfg.source == e.config_path

    for name in ("Entity.md", "Fact.md", "Daily.md"):
        assert (e.vault / "Templates" / name).read_bytes() == (PACKAGE_TEMPLATES / name).read_bytes()
    dashboard = (
        (PACKAGE_TEMPLATES / "Memory.base").read_bytes().replace(b"- file.name\n", b"- file.name\n      - text\n")
    )
    assert (e.vault / "Memory.base").read_bytes() == dashboard
    daily = json.loads((e.vault / ".obsidian/daily-notes.json").read_text())
    assert daily["folder"] == "Daily"
    assert daily["format"] == "YYYY-MM-DD"
    assert json.loads((e.vault / ".obsidian/templates.json").read_text()) == {"folder": "Templates"}
    assert ".vaultsync/" in (e.vault / ".gitignore").read_text().splitlines()

    assert sorted(tree_bytes(e.vault, (".git", ".vaultsync"))) == INIT_FILES  # the state folder: ignored by git
    assert commit_count(e.vault) == 1
    assert commit_files(e.vault) == INIT_FILES
    assert author(e.vault) == (AGENT, AGENT)
    assert message(e.vault).startswith("vaultsync init")
    assert git(e.vault, "status", "--porcelain", "--untracked-files=all") == ""
    # init never touches the memory tree.
    assert tree_bytes(e.mem) == tree_bytes(EXAMPLE)


def test_init_keeps_existing_user_files_and_extends_gitignore(tmp_path: Path) -> None:
    e = make_env(tmp_path / "sandbox")
    mine = {
        "Templates/Fact.md": b"---\nstatus: active\nmy_own_field: 1\n---\nmy fact template\n",
        ".obsidian/daily-notes.json": b'{"folder": "Journal", "format": "DD.MM.YYYY"}\n',
    }
    for rel, data in mine.items():
        (e.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (e.vault / rel).write_bytes(data)
    (e.vault / ".gitignore").write_bytes(b"*.tmp\n.trash/")  # no final newline

    result = e.init()

    for rel, data in mine.items():
        assert (e.vault / rel).read_bytes() == data
    assert (e.vault / ".gitignore").read_text() == "*.tmp\n.trash/\n.vaultsync/\n.obsidian/workspace*.json\n*.vstmp\n"
    assert set(result.kept) == set(mine)
    assert sorted(result.created) == sorted(set(INIT_FILES) - set(mine))
    assert (e.vault / "Templates/Entity.md").read_bytes() == (PACKAGE_TEMPLATES / "Entity.md").read_bytes()
    # A vault adopted into a new repository: the person's own files first, as the person, then what init made,
    # as the agent; nothing stays untracked.
    assert commit_count(e.vault) == 2
    assert commit_files(e.vault, "HEAD~1") == sorted(mine)
    assert git(e.vault, "log", "-1", "--format=%an", "HEAD~1").strip() != "vaultsync agent"
    assert commit_files(e.vault) == sorted(result.created)
    assert git(e.vault, "log", "-1", "--format=%an").strip() == "vaultsync agent"
    assert git(e.vault, "status", "--porcelain", "--untracked-files=all").splitlines() == []


def test_init_in_an_existing_repo_leaves_the_persons_staged_file_staged(tmp_path: Path) -> None:
    e = make_env(tmp_path / "sandbox")
    e.vault.mkdir()
    git(e.vault, "init", "--quiet", "--initial-branch=main")
    (e.vault / "mine.md").write_text("my note\n")
    git(e.vault, "add", "mine.md")

    result = e.init()

    assert result.repo_created is False
    assert commit_count(e.vault) == 1
    assert commit_files(e.vault) == INIT_FILES
    assert staged(e.vault) == ["mine.md"]
    assert "mine.md" not in all_committed_paths(e.vault)


def _but_the_lock(vault: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of the vault, its state folder's included, but the run lock, which init now takes to write
    (the lock file holds the pid of whoever took it last)."""
    return {k: v for k, v in tree_stat(vault).items() if k != ".vaultsync/lock"}


def test_init_again_with_the_same_config_changes_nothing(env: Env) -> None:
    before = _but_the_lock(env.vault)
    config_before = env.config_path.read_bytes()
    sha = head(env.vault)

    result = env.init()

    assert result.created == []
    assert sorted(result.kept) == [f for f in INIT_FILES if f != ".gitignore"]
    assert result.repo_created is False
    assert _but_the_lock(env.vault) == before
    assert env.config_path.read_bytes() == config_before
    assert head(env.vault) == sha


def _overlap_layout(root: Path) -> tuple[Path, Path]:
    workspace = root / "a" / "workspace"
    life = root / "b" / "life"
    shutil.copytree(EXAMPLE / "workspace", workspace)
    shutil.copytree(EXAMPLE / "life", life)
    (root / "link-to-life").symlink_to(life, target_is_directory=True)
    return workspace, life


OVERLAPS = {
    "equal-workspace": "a/workspace",
    "equal-workspace-via-dotdot": "a/workspace/../workspace",
    "inside-workspace": "a/workspace/vault",
    "parent-of-workspace": "a",
    "equal-life": "b/life",
    "inside-life": "b/life/vault",
    "inside-life-via-symlink": "link-to-life/vault",
    "parent-of-life": "b",
    "parent-of-both": ".",
}


@pytest.mark.parametrize("vault_rel", OVERLAPS.values(), ids=OVERLAPS.keys())
def test_init_refuses_a_vault_overlapping_a_memory_root(
    tmp_path: Path, vault_rel: str, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "t"
    workspace, life = _overlap_layout(root)
    vault = Path(f"{root}/{vault_rel}")
    config_path = tmp_path / "config.toml"
    before = tree_bytes(root, exclude=())

    with pytest.raises(ConfigError):
        init_vault(workspace, life, vault, config_path)
    rc = init_cli(workspace, life, vault, config_path)

    assert rc == ExitCode.USAGE == 2
    assert "vaultsync:" in capsys.readouterr().err
    assert not config_path.exists()
    # Nothing at all was created: no vault folder, no repository, no templates in the memory roots.
    assert tree_bytes(root, exclude=()) == before
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir() and p.name == ".git") == []
    assert not (root / "a/workspace/vault").exists()
    assert not (root / "b/life/vault").exists()


def test_init_refuses_to_overwrite_a_different_config(tmp_path: Path) -> None:
    e = make_env(tmp_path / "sandbox")
    e.config_path.write_text('# mine\n[paths]\nworkspace = "/elsewhere/ws"\nlife = "/elsewhere/life"\n')
    mine = e.config_path.read_bytes()

    with pytest.raises(ConfigError):
        e.init()
    rc = init_cli(e.workspace, e.life, e.vault, e.config_path)

    assert rc == 2
    assert e.config_path.read_bytes() == mine
    assert not e.vault.exists()


# -- 2. layout and properties after one pass -----------------------------------------------------------------
def test_first_pass_renders_exactly_the_expected_notes(synced: Env) -> None:
    notes = managed(synced.vault)
    acme = {n for n in notes if n.startswith(ACME_FACTS + "/")}
    assert notes - acme == EXPECTED_NOTES
    assert len(acme) == 4
    assert all(ACME_NOTE.match(n) for n in acme), sorted(acme)
    # vaultsync's state lives in the vault's hidden folder, never in the memory tree.
    assert (synced.vault / ".vaultsync/base.sqlite").is_file()
    assert not list(synced.mem.rglob(".vaultsync"))


def test_entity_note_properties_and_body(synced: Env) -> None:
    text = read(synced, SARAH_NOTE)
    frontmatter, body = split_note(text)
    assert frontmatter == SARAH_FRONTMATTER
    assert yaml.safe_load(frontmatter.strip("-\n")) == {
        "kind": "people",
        "aliases": ["Sarah Chen"],
        "tags": ["memory/person"],
        "facts_active": 5,
        "facts_superseded": 1,
        "related": ["[[acme-corp|Acme Corp]]", "[[miguel-ortiz|Miguel Ortiz]]", "[[project-atlas|Project Atlas]]"],
        "updated": dt.date(2026, 11, 24),
    }
    summary = (synced.life / "areas/people/sarah-chen/summary.md").read_text(encoding="utf-8")
    cut = body.index("\n" + VIEW_MARKER + "\n")
    assert body[:cut] == summary
    view = body[cut + 1 :]
    assert view.count(VIEW_MARKER) == 1
    assert "```base\n" in view
    assert 'file.inFolder("2 Areas/people/sarah-chen/facts")' in view
    assert view.endswith("```\n")


def test_every_entity_note_body_is_its_summary_byte_for_byte(synced: Env) -> None:
    para = {"projects": "1 Projects", "areas": "2 Areas", "resources": "3 Resources", "archives": "4 Archives"}
    summaries = sorted(synced.life.rglob("summary.md"))
    assert len(summaries) == 7
    for summary in summaries:
        rel = summary.parent.relative_to(synced.life)
        folder, *rest = rel.parts
        note = synced.vault / para[folder] / Path(*rest) / f"{rel.name}.md"
        _, body = split_note(note.read_bytes().decode("utf-8"))
        cut = body.index("\n" + VIEW_MARKER + "\n")
        assert body[:cut].encode("utf-8") == summary.read_bytes(), note


def test_entity_kind_and_tags_follow_the_path(synced: Env) -> None:
    expected = {
        "1 Projects/project-atlas/project-atlas.md": ("projects", "memory/project"),
        "2 Areas/companies/acme-corp/acme-corp.md": ("companies", "memory/company"),
        "2 Areas/people/li-wei/li-wei.md": ("people", "memory/person"),
        "3 Resources/reading-list/reading-list.md": ("resources", "memory/resource"),
        "4 Archives/old-apartment/old-apartment.md": ("archives", "memory/archive"),
    }
    for rel, (kind, tag) in expected.items():
        props = yaml.safe_load(split_note(read(synced, rel))[0].strip("-\n"))
        assert (props["kind"], props["tags"]) == (kind, [tag]), rel
    li_wei = yaml.safe_load(split_note(read(synced, "2 Areas/people/li-wei/li-wei.md"))[0].strip("-\n"))
    assert li_wei["aliases"] == ["李伟 (Li Wei)"]
    reading = yaml.safe_load(split_note(read(synced, "3 Resources/reading-list/reading-list.md"))[0].strip("-\n"))
    assert (reading["facts_active"], reading["facts_superseded"], reading["related"]) == (0, 0, [])


def test_fact_notes_with_ids(synced: Env) -> None:
    text = read(synced, "2 Areas/people/sarah-chen/facts/sarah-chen-002.md")
    assert text == SARAH_002
    props = yaml.safe_load(split_note(text)[0].strip("-\n"))
    assert props["timestamp"] == dt.date(2026, 10, 6)  # unquoted: an Obsidian date property
    assert props["supersededBy"] == "[[sarah-chen-005]]"
    # supersededBy: null is not shown on an active fact.
    assert read(synced, "2 Areas/people/sarah-chen/facts/sarah-chen-001.md") == SARAH_001


def test_idless_facts_get_hashed_names_timestamp_and_plain_text_superseded_by(synced: Env) -> None:
    items = json.loads((synced.life / "areas/companies/acme-corp/items.json").read_text())["items"]
    notes = acme_notes(synced)
    assert sorted(notes) == sorted(f["fact"] + "\n" for f in items)
    assert read(synced, notes[items[1]["fact"] + "\n"]) == ACME_SUPERSEDED
    for fact in items:
        frontmatter, _ = split_note(read(synced, notes[fact["fact"] + "\n"]))
        lines = frontmatter.splitlines()
        assert f"timestamp: {fact['date']}" in lines
        assert not any(line.startswith(("date:", "superseded_by:", "id:")) for line in lines)
    # Free text in superseded_by is text, not a link to a note that cannot exist.
    shown = split_note(read(synced, notes[items[1]["fact"] + "\n"]))[0].splitlines()
    assert [ln for ln in shown if ln.startswith("supersededBy:")] == ["supersededBy: Replaced after the Q4 reorg"]


def test_rendering_is_deterministic_across_independent_vaults(synced: Env, tmp_path: Path) -> None:
    other = make_env(tmp_path / "other")
    other.init()
    assert run_pass(other.cfg(), PassOptions()).exit_code == ExitCode.CLEAN
    mine = {rel: data for rel, data in tree_bytes(synced.vault, NOT_MANAGED).items()}
    theirs = {rel: data for rel, data in tree_bytes(other.vault, NOT_MANAGED).items()}
    assert sorted(mine) == sorted(theirs)  # includes acme-corp's hashed note names
    assert mine == theirs


def test_workspace_and_life_files_are_mirrored_byte_identical(synced: Env) -> None:
    ws, life, v = synced.workspace, synced.life, synced.vault
    pairs = {
        ws / "MEMORY.md": "3 Resources/agent/MEMORY.md",
        ws / "HEARTBEAT.md": "3 Resources/agent/HEARTBEAT.md",
        ws / "memory/archive/2026-10.md": "4 Archives/agent/2026-10.md",
        ws / "memory/model-usage-log.md": "3 Resources/agent/memory/model-usage-log.md",
        life / "index.md": "3 Resources/agent/life/index.md",
    }
    for day in ("2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01"):
        pairs[ws / f"memory/{day}.md"] = f"Daily/{day}.md"
    for source, rel in pairs.items():
        assert (v / rel).read_bytes() == source.read_bytes(), rel
    assert (v / "4 Archives/old-apartment/old-apartment.md").is_file()
    assert sorted(p.name for p in (v / "4 Archives/old-apartment/facts").iterdir()) == [
        f"old-apartment-00{n}.md" for n in range(1, 6)
    ]


# -- 3. the memory tree is untouched -------------------------------------------------------------------------
def test_first_pass_leaves_memory_tree_byte_identical(env: Env) -> None:
    before = tree_stat(env.mem, exclude=())
    report = run_pass(env.cfg(), PassOptions())
    assert report.exit_code == ExitCode.CLEAN
    assert report.files_written == 47
    assert tree_stat(env.mem, exclude=()) == before
    assert tree_bytes(env.mem, exclude=()) == tree_bytes(EXAMPLE, exclude=())


# -- 4. no-op ------------------------------------------------------------------------------------------------
def test_second_pass_writes_nothing_and_commits_nothing(synced: Env) -> None:
    # The lock file's content (the holder's pid) is rewritten by every pass by design, git refreshes the stat
    # cache in the snapshot index when it looks at the vault, the record of runs gains this one, and a pass that
    # finds no recall index (a cache of the memory) builds it; everything else counts.
    skip = (".git", ".vaultsync/lock", ".vaultsync/snapshot.index", ".vaultsync/runs.json", ".vaultsync/recall.sqlite")
    vault_before = tree_stat(synced.vault, skip)
    mem_before = tree_stat(synced.mem, exclude=())
    sha = head(synced.vault)

    report = run_pass(synced.cfg(), PassOptions())
    assert (report.actions, report.changes, report.commits, report.files_written) == ([], [], [], 0)
    assert sync_cli(synced) == 0

    assert tree_stat(synced.vault, skip) == vault_before
    assert tree_stat(synced.mem, exclude=()) == mem_before
    assert head(synced.vault) == sha


# -- 5. dry run and JSON ---------------------------------------------------------------------------------------
def test_dry_run_first_pass_writes_nothing_and_lists_the_plan(env: Env, capsys: pytest.CaptureFixture) -> None:
    vault_before = tree_stat(env.vault, (".git", ".vaultsync"))
    mem_before = tree_stat(env.mem, exclude=())
    sha = head(env.vault)

    assert sync_cli(env, "--dry-run") == 0

    out = capsys.readouterr().out
    assert tree_stat(env.vault, (".git", ".vaultsync")) == vault_before
    assert tree_stat(env.mem, exclude=()) == mem_before
    assert head(env.vault) == sha
    assert commit_count(env.vault) == 1
    listed = {line.strip().removeprefix("vault: write ") for line in out.splitlines() if "vault: write " in line}
    acme = {n for n in listed if n.startswith(ACME_FACTS + "/")}
    assert listed - acme == EXPECTED_NOTES
    assert len(acme) == 4 and all(ACME_NOTE.match(n) for n in acme)
    assert "would write 47 file(s)" in out


def test_dry_run_first_pass_creates_no_base(env: Env) -> None:
    assert sync_cli(env, "--dry-run") == 0
    assert not (env.vault / ".vaultsync/base.sqlite").exists()


def test_dry_run_after_an_agent_edit_leaves_base_and_vault_untouched(
    synced: Env, capsys: pytest.CaptureFixture
) -> None:
    agent_appends_fact_and_daily_line(synced)
    skip = (".git", ".vaultsync/lock")
    vault_before = tree_stat(synced.vault, skip)
    mem_before = tree_stat(synced.mem, exclude=())
    base_before = (synced.vault / ".vaultsync/base.sqlite").read_bytes()
    sha = head(synced.vault)
    capsys.readouterr()

    assert sync_cli(synced, "--dry-run") == 0

    out = capsys.readouterr().out
    assert tree_stat(synced.vault, skip) == vault_before
    assert (synced.vault / ".vaultsync/base.sqlite").read_bytes() == base_before
    assert tree_stat(synced.mem, exclude=()) == mem_before
    assert head(synced.vault) == sha
    listed = sorted(line.strip() for line in out.splitlines() if line.strip().startswith("vault: "))
    assert listed == [
        "vault: write 2 Areas/people/sarah-chen/facts/sarah-chen-007.md",
        "vault: write 2 Areas/people/sarah-chen/sarah-chen.md",
        "vault: write Daily/2026-12-01.md",
    ]
    assert "would write 3 file(s)" in out


def test_report_under_cron_is_plain_lines_without_loading_rich(synced: Env) -> None:
    """Not a terminal (cron's log, a pipe): one line per change, no table drawing, and rich is never imported."""
    agent_appends_fact_and_daily_line(synced)
    synced.life.joinpath("areas/companies/acme-corp/items.json").write_text("[{", encoding="utf-8")
    code = (
        "import sys\n"
        "from vaultsync.cli import main\n"
        f"rc = main(['sync', '--config', {str(synced.config_path)!r}])\n"
        "print('rich loaded' if any(m.split('.')[0] == 'rich' for m in sys.modules) else 'no rich')\n"
        "sys.exit(rc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    lines = run.stdout.splitlines()
    assert lines[0] == "changes:", run.stdout
    assert "  memory  people/sarah-chen: +1 fact" in lines
    assert "  memory  daily 2026-12-01: edited" in lines
    assert any(line.startswith("error: ") and "acme-corp/items.json" in line for line in lines), lines
    assert lines[-2].startswith("wrote ") and ", 1 commit(s): " in lines[-2]
    assert lines[-1] == "no rich"
    assert not any(ch in run.stdout for ch in "┃━│"), "a table was drawn for a log"
    assert run.returncode == ExitCode.SKIPPED_INPUT, run.stderr


def test_json_report(env: Env, capsys: pytest.CaptureFixture) -> None:
    assert sync_cli(env, "--dry-run", "--json") == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] is True
    assert dry["commits"] == []
    assert len(dry["actions"]) == 47

    assert sync_cli(env, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert {"exit_code", "changes", "actions", "problems", "commits"} <= set(report)
    assert report["exit_code"] == 0
    assert report["dry_run"] is False
    assert report["problems"] == []
    assert report["commits"] == [head(env.vault)]
    assert sorted(report["actions"]) == sorted(dry["actions"])
    assert sorted(report["actions"]) == sorted(f"vault: write {n}" for n in managed(env.vault))
    sarah = [c for c in report["changes"] if c["scope"] == "people/sarah-chen"]
    assert sorted(c["what"] for c in sarah) == ["+fact"] * 6 + ["new entity"]
    assert {c["side"] for c in report["changes"]} == {"memory"}
    assert {"side": "memory", "scope": "daily 2026-12-01", "what": "created"} in report["changes"]


def test_json_report_is_written_as_its_dict_would_print() -> None:
    report = Report(
        actions=["vault: write 2 Areas/people/李伟/李伟.md"],
        changes=[SideChange("memory", "people/李伟", "+fact"), SideChange("vault", 'say "hi"\nthere', "edited")],
        conflicts=[Conflict("fact:li-wei-001", "people/李伟", "both sides", "2 Areas/x.conflict.md")],
        open_conflicts=["2 Areas/x.conflict.md"],
        problems=[Problem("life/a/items.json", "not JSON: line 1", Severity.WARNING)],
        commits=["abc123"],
        files_written=3,
        stopped="too many deletions",
    )
    out = io.StringIO()
    report.write_json(out)

    assert out.getvalue() == json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    data = json.loads(out.getvalue())
    assert data["changes"][0] == {"side": "memory", "scope": "people/李伟", "what": "+fact"}
    assert data["conflicts"][0]["copy_path"] == "2 Areas/x.conflict.md"
    assert data["problems"] == [{"path": "life/a/items.json", "message": "not JSON: line 1", "severity": "warning"}]
    assert data["exit_code"] == ExitCode.SAFETY_STOP
    assert "李伟" in out.getvalue()


# -- 6. commits ----------------------------------------------------------------------------------------------
def test_first_pass_commit(env: Env) -> None:
    report = run_pass(env.cfg(), PassOptions())

    assert report.commits == [head(env.vault)]
    assert commit_count(env.vault) == 2
    assert commit_files(env.vault) == sorted(managed(env.vault))
    assert len(commit_files(env.vault)) == 47
    assert not [p for p in commit_files(env.vault) if p.startswith((".vaultsync/", "Templates/"))]
    assert author(env.vault) == (AGENT, AGENT)
    text = message(env.vault)
    assert text.startswith("memory -> vault:")
    for scope in ("people/sarah-chen", "companies/acme-corp", "projects/project-atlas", "archives/old-apartment"):
        assert scope in text
    assert git(env.vault, "status", "--porcelain", "--untracked-files=all") == ""
    assert ".vaultsync/base.sqlite" not in git(env.vault, "ls-files")


def test_agent_edit_commits_exactly_the_changed_notes(synced: Env) -> None:
    sarah_before = read(synced, SARAH_NOTE)
    (synced.vault / "Inbox").mkdir()
    (synced.vault / "Inbox/idea.md").write_text("# An idea of my own\n")
    (synced.vault / "Drafts").mkdir()
    (synced.vault / "Drafts/staged.md").write_text("staged by hand\n")
    git(synced.vault, "add", "Drafts/staged.md")
    agent_appends_fact_and_daily_line(synced)
    mem_before = tree_stat(synced.mem, exclude=())
    sha = head(synced.vault)

    report = run_pass(synced.cfg(), PassOptions())

    assert report.exit_code == ExitCode.CLEAN
    assert report.commits == [head(synced.vault)]
    assert git(synced.vault, "rev-parse", "HEAD~1").strip() == sha
    assert commit_files(synced.vault) == [
        "2 Areas/people/sarah-chen/facts/sarah-chen-007.md",
        "2 Areas/people/sarah-chen/sarah-chen.md",
        "Daily/2026-12-01.md",
    ]
    assert author(synced.vault) == (AGENT, AGENT)
    subject = message(synced.vault).splitlines()[0]
    assert subject.startswith("memory -> vault:")
    assert "people/sarah-chen +1 fact" in subject
    assert "daily 2026-12-01" in subject

    assert read(synced, "2 Areas/people/sarah-chen/facts/sarah-chen-007.md") == SARAH_007
    assert read(synced, SARAH_NOTE) == sarah_before.replace("facts_active: 5", "facts_active: 6").replace(
        "updated: 2026-11-24", "updated: 2026-12-01"
    )
    assert (synced.vault / "Daily/2026-12-01.md").read_bytes() == (
        synced.workspace / "memory/2026-12-01.md"
    ).read_bytes()
    assert (synced.vault / "Daily/2026-12-01.md").read_text().endswith(DAILY_LINE)
    # The agent's files are not rewritten by the pass.
    assert tree_stat(synced.mem, exclude=()) == mem_before
    # The person's own files: never committed, and what they staged stays staged.
    assert staged(synced.vault) == ["Drafts/staged.md"]
    committed = all_committed_paths(synced.vault)
    assert "Inbox/idea.md" not in committed
    assert "Drafts/staged.md" not in committed
    assert (synced.vault / "Inbox/idea.md").read_text() == "# An idea of my own\n"
    assert git(synced.vault, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        "A  Drafts/staged.md",
        "?? Inbox/idea.md",
    ]


# -- 7. the run lock -------------------------------------------------------------------------------------------
LOCK_HOLDER = """
import sys, time
from pathlib import Path
from vaultsync.system.lock import run_lock
with run_lock(Path(sys.argv[1])):
    Path(sys.argv[2]).write_text("ready")
    time.sleep(60)
"""


def test_a_held_lock_exits_3_and_writes_nothing(env: Env, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cfg = env.cfg()
    ready = tmp_path / "lock-ready"
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(cfg.state_dir / "lock"), str(ready)])
    try:
        deadline = time.monotonic() + 10
        while not ready.exists():
            assert holder.poll() is None, "the lock-holding child exited early"
            assert time.monotonic() < deadline, "the lock-holding child never signalled"
            time.sleep(0.02)
        # The run is recorded (exit 3) in the record of runs, which is all it writes.
        skip = (".git", ".vaultsync/runs.json")
        vault_before = tree_stat(env.vault, skip)
        mem_before = tree_stat(env.mem, exclude=())
        sha = head(env.vault)

        assert sync_cli(env) == ExitCode.LOCKED == 3
        assert "lock" in capsys.readouterr().err
        with pytest.raises(LockHeld):
            status(cfg)

        assert [(r.kind, r.exit_code) for r in runs.history(cfg.state_dir)] == [("sync", 3)]
        assert tree_stat(env.vault, skip) == vault_before
        assert tree_stat(env.mem, exclude=()) == mem_before
        assert head(env.vault) == sha
        assert not (env.vault / ".vaultsync/base.sqlite").exists()
        assert managed(env.vault) == set()
    finally:
        holder.kill()
        holder.wait()
    # The kernel drops the lock with its holder: the next pass runs.
    assert sync_cli(env) == 0
    assert len(managed(env.vault)) == 47


# -- 8. exit codes -------------------------------------------------------------------------------------------
def test_exit_0_on_a_clean_pass(env: Env) -> None:
    assert sync_cli(env) == ExitCode.CLEAN == 0


def test_exit_5_for_a_broken_items_json_while_the_rest_syncs(env: Env, capsys: pytest.CaptureFixture) -> None:
    broken = env.life / "areas/people/li-wei/items.json"
    broken.write_text("{")
    broken_stat = broken.stat().st_mtime_ns

    assert sync_cli(env, "--json") == ExitCode.SKIPPED_INPUT == 5

    report = json.loads(capsys.readouterr().out)
    assert report["exit_code"] == 5
    errors = [p for p in report["problems"] if p["severity"] == "error"]
    assert len(errors) == 1
    assert errors[0]["path"].endswith("areas/people/li-wei/items.json")
    assert errors[0]["message"]
    # The broken file is left exactly as it was; no fact note is made up for it.
    assert broken.read_text() == "{"
    assert broken.stat().st_mtime_ns == broken_stat
    assert not (env.vault / "2 Areas/people/li-wei/facts").exists()
    # Its entity note waits too: counts and links made from unreadable facts would be wrong.
    assert not (env.vault / "2 Areas/people/li-wei/li-wei.md").exists()
    # Everything else synced and was committed.
    assert read(env, "2 Areas/people/sarah-chen/facts/sarah-chen-002.md") == SARAH_002
    assert split_note(read(env, SARAH_NOTE))[0] == SARAH_FRONTMATTER
    notes = managed(env.vault)
    li_wei = _facts("2 Areas/people/li-wei", "li-wei", 5) | {"2 Areas/people/li-wei/li-wei.md"}
    assert notes - {n for n in notes if n.startswith(ACME_FACTS + "/")} == EXPECTED_NOTES - li_wei
    assert report["commits"] == [head(env.vault)]
    assert commit_files(env.vault) == sorted(notes)


def test_exit_5_for_an_items_json_broken_after_a_sync_keeps_its_notes(synced: Env) -> None:
    li_wei_dir = "2 Areas/people/li-wei"
    li_wei_before = tree_stat(synced.vault / li_wei_dir)
    (synced.life / "areas/people/li-wei/items.json").write_text("{")
    with (synced.workspace / "HEARTBEAT.md").open("a") as handle:
        handle.write("- 18:00 pinged Li Wei about the DHL tracking number\n")

    report: Report = run_pass(synced.cfg(), PassOptions())

    assert report.exit_code == ExitCode.SKIPPED_INPUT
    assert [p.path.endswith("areas/people/li-wei/items.json") for p in report.problems] == [True]
    assert tree_stat(synced.vault / li_wei_dir) == li_wei_before
    assert (synced.life / "areas/people/li-wei/items.json").read_text() == "{"
    assert commit_files(synced.vault) == ["3 Resources/agent/HEARTBEAT.md"]
    assert (synced.vault / "3 Resources/agent/HEARTBEAT.md").read_bytes() == (
        synced.workspace / "HEARTBEAT.md"
    ).read_bytes()


def test_exit_2_for_a_missing_or_invalid_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "nowhere" / "config.toml"
    assert cli.main(["sync", "--config", str(missing)]) == ExitCode.USAGE == 2
    assert str(missing) in capsys.readouterr().err
    assert not missing.parent.exists()

    bad = tmp_path / "bad.toml"
    bad.write_text("[paths\nworkspace = 1\n")
    assert cli.main(["sync", "--config", str(bad)]) == 2
    assert cli.main(["sync", "--dry-run", "--config", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err
