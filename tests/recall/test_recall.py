"""Recall: the FTS5 index over vault-example, kept current by passes, rebuilt when broken, and never failing on
what a person types. Real trees, a real vault and git; nothing of vaultsync is mocked."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.twoway import ATLAS, NOW, SARAH, TODAY, Env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultsync import cli
from vaultsync.app import recall as recall_app
from vaultsync.app.recall import Recaller, RecallOptions, recall, search
from vaultsync.app.sync import PassOptions, sync
from vaultsync.state.files import StateFiles
from vaultsync.write_path import recall_docs
from vaultsync.write_path.recall_refresh import refresh


def ids(result: object) -> list[str | None]:
    return [hit.id for hit in result.hits]  # type: ignore[attr-defined]


def app_sync(env: Env) -> None:
    """A pass through the app layer, as every face runs it (it keeps the recall index current)."""
    report = sync(env.cfg, PassOptions(today=TODAY, now=lambda: NOW))
    assert report.exit_code == 0, report.to_json()


def test_fact_hit_carries_where_it_lives(env: Env) -> None:
    result = recall(env.cfg, "firmware drift", RecallOptions(kinds=("fact",)))

    top = result.hits[0].to_json()
    assert top == {
        "kind": "fact",
        "root": "life",
        "path": "projects/project-atlas/items.json",
        "lines": None,
        "id": "atlas-005",
        "entity": ATLAS,
        "status": "active",
        "superseded_by": None,
        "vault_path": "1 Projects/project-atlas/facts/atlas-005.md",
        "text": "Firmware v0.9 from Miguel Ortiz is due 2026-12-05; it fixes CO2 drift",
        "score": top["score"],
    }
    assert top["score"] > 0


def test_daily_hit_points_at_its_lines(env: Env) -> None:
    result = recall(env.cfg, "silent pilot units Wi-Fi", RecallOptions(kinds=("daily",)))

    hit = result.hits[0]
    assert (hit.root, hit.path, hit.vault_path) == ("workspace", "memory/2026-11-30.md", "Daily/2026-11-30.md")
    assert hit.lines is not None
    lines = env.workspace.joinpath(hit.path).read_text(encoding="utf-8").splitlines()
    assert "Wi-Fi" in lines[hit.lines[0] - 1] and hit.lines[0] == hit.lines[1]
    assert hit.text == lines[hit.lines[0] - 1]


def test_memory_md_is_found_by_section(env: Env) -> None:
    result = recall(env.cfg, "password manager credentials", RecallOptions(kinds=("memory",)))

    hit = result.hits[0]
    assert (hit.root, hit.path) == ("workspace", "MEMORY.md")
    assert hit.lines is not None
    section = env.workspace.joinpath("MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert section[hit.lines[0] - 1].startswith("#")
    assert any("password manager" in line for line in section[hit.lines[0] - 1 : hit.lines[1]])


def test_current_fact_comes_before_the_one_it_replaced(env: Env) -> None:
    result = recall(env.cfg, "Alder Street apartment", RecallOptions(kinds=("fact",)))

    statuses = [hit.status for hit in result.hits]
    assert "superseded" in statuses and "active" in statuses
    assert statuses.index("superseded") > max(i for i, s in enumerate(statuses) if s == "active")
    old = next(hit for hit in result.hits if hit.id == "old-apartment-001")
    assert old.superseded_by == "old-apartment-003"
    active = recall(env.cfg, "Alder Street apartment", RecallOptions(kinds=("fact",), active_only=True))
    assert "old-apartment-001" not in ids(active) and "old-apartment-003" in ids(active)


def test_filters_by_entity_kind_and_date(env: Env) -> None:
    only_sarah = recall(env.cfg, "Acme Corp", RecallOptions(entity="sarah-chen", limit=50))
    assert only_sarah.hits and {hit.entity for hit in only_sarah.hits} == {SARAH}
    by_path = recall(env.cfg, "Acme Corp", RecallOptions(entity="people/sarah-chen", limit=50))
    assert ids(by_path) == ids(only_sarah)
    dated = recall(env.cfg, "Sarah", RecallOptions(kinds=("daily",), since="2026-11-29", until="2026-11-30"))
    assert dated.hits and {hit.path for hit in dated.hits} <= {"memory/2026-11-29.md", "memory/2026-11-30.md"}


def test_plurals_and_tenses_match(env: Env) -> None:
    assert "atlas-005" in ids(recall(env.cfg, "fixing drifts", RecallOptions(kinds=("fact",))))


def test_chinese_found_by_a_substring(env: Env) -> None:
    env.agent_edit(
        SARAH,
        lambda facts: facts.append({"id": "sarah-chen-zh", "fact": "莎拉负责深圳工厂的参观安排", "status": "active"}),
    )
    app_sync(env)

    for query in ("深圳工厂", "工厂", "圳"):
        assert "sarah-chen-zh" in ids(recall(env.cfg, query)), query


def test_pass_keeps_the_index_current(env: Env) -> None:
    recall(env.cfg, "anything")  # builds the index
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-099", "fact": "Sarah adopted a greyhound"}))
    daily = env.workspace / "memory" / "2026-11-28.md"
    daily.unlink()
    app_sync(env)

    db = sqlite3.connect(StateFiles(env.cfg.state_dir).recall)
    bodies = [row[0] for row in db.execute("SELECT body FROM docs")]
    sources = {row[0] for row in db.execute("SELECT source FROM docs")}
    db.close()
    assert "Sarah adopted a greyhound" in bodies
    assert "workspace/memory/2026-11-28.md" not in sources
    assert ids(recall(env.cfg, "greyhound")) == ["sarah-chen-099"]


def test_query_refreshes_what_changed_since(env: Env) -> None:
    recall(env.cfg, "anything")
    env.agent_edit(ATLAS, lambda facts: facts[0].update(fact="Atlas moved to a titanium chassis"))

    assert ids(recall(env.cfg, "titanium")) == [env.facts(ATLAS)[0]["id"]]


def test_a_long_running_face_refreshes_on_its_clock_or_after_its_own_writes(env: Env) -> None:
    """The HTTP API keeps its index open: an edit on disk waits for the refresh interval, a write the face made
    (``stale``) is seen by the very next query."""
    recaller = Recaller(env.cfg, every=3600)
    assert recaller("titanium").hits == []
    env.agent_edit(ATLAS, lambda facts: facts[0].update(fact="Atlas moved to a titanium chassis"))
    assert recaller("titanium").hits == [], "refreshed before its interval"
    recaller.stale()
    assert ids(recaller("titanium")) == [env.facts(ATLAS)[0]["id"]]
    assert ids(Recaller(env.cfg, every=0)("titanium")) == [env.facts(ATLAS)[0]["id"]]


def test_a_face_between_queries_leaves_the_index_free_for_a_pass(env: Env) -> None:
    """``vaultsync serve`` keeps its index open between queries while passes refresh the same file. Here another
    writer, giving up at once rather than after SQLite's busy timeout, stands in for the pass."""
    recaller = Recaller(env.cfg, every=3600)
    assert recaller("firmware").hits
    writer = sqlite3.connect(StateFiles(env.cfg.state_dir).recall, timeout=0)
    try:
        with writer:
            writer.execute("INSERT OR REPLACE INTO meta VALUES ('note:probe', 'a pass was here')")
    finally:
        writer.close()
    assert recall_app.search(recaller._local.index, "firmware", RecallOptions()).hits


def _age_memory(env: Env, seconds: int = 3600) -> None:
    """Date every memory file an hour back, as a tree looks between an agent's sessions: stats old enough to trust."""
    old = time.time() - seconds
    for root in (env.workspace, env.life):
        for path in root.rglob("*"):
            if path.is_file():
                os.utime(path, (old, old))


def test_query_with_nothing_changed_does_not_list_the_tree(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    _age_memory(env)
    recall(env.cfg, "anything")  # reads what moved and keeps the walk's digest

    def listing(cfg: object) -> None:
        raise AssertionError("the tree was listed although nothing changed")

    monkeypatch.setattr(recall_docs, "tree_files", listing)
    assert "atlas-005" in ids(recall(env.cfg, "firmware drift"))


def test_an_edit_is_seen_even_with_its_old_mtime_put_back(env: Env) -> None:
    _age_memory(env)
    recall(env.cfg, "anything")
    items = env.life / ATLAS / "items.json"
    before = items.stat()
    env.agent_edit(ATLAS, lambda facts: facts[0].update(fact="Atlas moved to a titanium chassis"))
    os.utime(items, ns=(before.st_atime_ns, before.st_mtime_ns))

    assert ids(recall(env.cfg, "titanium")) == [env.facts(ATLAS)[0]["id"]]


def test_a_query_of_only_common_words_still_returns_hits(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every word counts as common: none is dropped for being common when no rarer one is left.
    monkeypatch.setattr(recall_app, "COMMON_SHARE", 0.0)
    monkeypatch.setattr(recall_app, "MIN_COMMON", 0)
    assert "atlas-005" in ids(recall(env.cfg, "firmware drift"))
    assert "atlas-005" in ids(recall(env.cfg, "firmware zeppelin"))  # no piece holds both words


def test_a_rare_word_in_a_long_query_is_found(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    env.agent_edit(SARAH, lambda facts: facts.append({"id": "sarah-chen-099", "fact": "Sarah adopted a greyhound"}))
    # The smallest budgets: only the rarest word is asked for once no piece holds them all.
    monkeypatch.setattr(recall_app, "RARE_ROWS", 1)
    monkeypatch.setattr(recall_app, "ROWS", 1)
    query = "what about the weekly Atlas check-in, Miguel, firmware, the pilot units and the greyhound"
    assert "sarah-chen-099" in ids(recall(env.cfg, query, RecallOptions(limit=5)))


@pytest.mark.parametrize("damage", ["garbage", "old schema", "empty file"])
def test_broken_or_old_index_is_rebuilt(env: Env, damage: str) -> None:
    recall(env.cfg, "anything")
    path = StateFiles(env.cfg.state_dir).recall
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "empty file":
        path.write_bytes(b"")
    else:
        db = sqlite3.connect(path)
        with db:
            db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
            db.execute("DELETE FROM docs")
        db.close()

    assert "atlas-005" in ids(recall(env.cfg, "firmware drift"))


def test_cli_recall_json_and_table(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(env.config_path)
    assert cli.main(["recall", "firmware", "--json", "--limit", "2", "--config", config]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["query"] == "firmware" and len(doc["hits"]) == 2
    assert set(doc["hits"][0]) >= {"kind", "root", "path", "lines", "id", "entity", "status", "vault_path", "text"}

    assert cli.main(["recall", "[bold]firmware[/bold]", "--config", config]) == 0
    assert "atlas-005.md" in capsys.readouterr().out.replace("\n", "")
    assert cli.main(["recall", "x", "--kind", "facts", "--config", config]) == 2
    assert cli.main(["recall", "x", "--since", "yesterday", "--config", config]) == 2


def test_no_change_pass_does_not_load_markdown_it(env: Env) -> None:
    recall(env.cfg, "anything")
    code = (
        "import sys\n"
        "from vaultsync.cli import main\n"
        f"rc = main(['sync', '--config', {str(env.config_path)!r}])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'markdown_it', 'sqlite3'}))\n"
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)  # settles
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines()[-1] == "[]", run.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index over vault-example for the property test (building it per example would be slow)."""
    from helpers.twoway import build_synced, isolate_git

    root = tmp_path_factory.mktemp("recall-built")
    with pytest.MonkeyPatch.context() as mp:
        isolate_git(mp.setenv, root / "git-env")
        env = build_synced(root / "setup")
    refresh(env.cfg).close()
    return env.root / "config.toml"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300) | st.sampled_from(['"', "*", "AND", "NEAR(", "a:b", "^", "-x", "(", "'", "\\", "中"]))
def test_any_query_text_is_plain_words(built: Path, query: str) -> None:
    from vaultsync import config as configmod

    index = refresh(configmod.load(built))
    try:
        result = search(index, query, RecallOptions())
    finally:
        index.close()
    assert isinstance(result.hits, list)
    assert result.query == query


def test_huge_query_is_plain_words(env: Env) -> None:
    query = ('firmware " * NEAR( ) AND OR: ^ ' * 400)[:10_240]
    assert "atlas-005" in ids(recall(env.cfg, query, RecallOptions(limit=50)))


def test_active_only_leaves_out_proposed_facts_and_ranks_them_after_active(env: Env) -> None:
    env.agent_edit(
        SARAH,
        lambda facts: facts.extend(
            [
                {
                    "id": "sarah-chen-p1",
                    "fact": "Sarah Chen keeps bonsai trees",
                    "status": "proposed",
                    "timestamp": "2026-12-01",
                },
                {
                    "id": "sarah-chen-a1",
                    "fact": "Sarah Chen keeps bonsai trees at home",
                    "status": "active",
                    "timestamp": "2026-01-01",
                },
                {"id": "sarah-chen-n1", "fact": "Sarah Chen keeps bonsai trees indoors", "timestamp": "2026-01-02"},
            ]
        ),
    )
    app_sync(env)

    active = recall(env.cfg, "bonsai trees", RecallOptions(kinds=("fact",), active_only=True))
    assert sorted(ids(active)) == ["sarah-chen-a1", "sarah-chen-n1"]
    every = recall(env.cfg, "bonsai trees", RecallOptions(kinds=("fact",)))
    assert ids(every)[-1] == "sarah-chen-p1" and len(ids(every)) == 3
    argv = ["recall", "bonsai", "--status", "active", "--json", "--config", str(env.config_path)]
    cli_out = subprocess.run(
        [sys.executable, "-m", "vaultsync.cli", *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "sarah-chen-p1" not in cli_out.stdout and "sarah-chen-a1" in cli_out.stdout
