"""remember, supersede, forget and patch through the library (``vaultsync.app.memory``), on a synced copy of
vault-example with real git: each write lands in items.json, in the vault and in an agent commit before it
returns."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env

from vaultsync.app import memory
from vaultsync.app.entities import get_entity, get_fact
from vaultsync.errors import Ambiguous, Invalid, LockHeld, NotFound
from vaultsync.state.files import StateFiles
from vaultsync.system.lock import run_lock


def last_author(env: Env, path: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(env.vault), "log", "-1", "--format=%an", "--", path], capture_output=True, text=True
    )
    return out.stdout.strip()


def dirty(env: Env) -> str:
    return subprocess.run(
        ["git", "-C", str(env.vault), "status", "--porcelain"], capture_output=True, text=True
    ).stdout.strip()


def test_remember_follows_the_entity_pattern_and_is_committed_by_the_agent(env: Env) -> None:
    before = env.items_path(SARAH).read_bytes()
    written = memory.remember(env.cfg, SARAH, "Sarah Chen moved to the Berlin office", {"category": "status"})
    assert written.fact is not None and written.fact.id == "sarah-chen-007"
    assert env.fact(SARAH, "sarah-chen-007")["fact"] == "Sarah Chen moved to the Berlin office"
    after = env.items_path(SARAH).read_bytes()
    assert after.startswith(before[: before.rstrip().rfind(b"}") + 1])  # only an append: the file keeps its style
    note = f"{SARAH_DIR}/facts/sarah-chen-007.md"
    assert (env.vault / note).is_file()
    assert last_author(env, note) == "vaultsync agent"
    assert written.fact.note == note and written.report.commits
    assert dirty(env) == ""


def test_an_id_that_ever_existed_is_not_given_again(env: Env) -> None:
    memory.forget(env.cfg, "sarah-chen-006", entity=SARAH)
    written = memory.remember(env.cfg, SARAH, "A newer fact")
    assert written.fact is not None and written.fact.id == "sarah-chen-007"  # 006 was used and forgotten


def test_a_short_id_pattern_is_followed(env: Env) -> None:
    rel = "areas/people/kim"
    (env.life / rel).mkdir(parents=True)
    (env.life / rel / "items.json").write_text('[{"id": "f009", "fact": "Kim plays chess"}]\n')
    written = memory.remember(env.cfg, rel, "Kim likes tea")
    assert written.fact is not None and written.fact.id == "f010"


def test_remember_into_a_new_entity_needs_create(env: Env) -> None:
    with pytest.raises(NotFound):
        memory.remember(env.cfg, "areas/people/nora", "Nora runs the lab")
    written = memory.remember(env.cfg, "areas/people/nora", "Nora runs the lab", create=True)
    assert written.fact is not None and written.fact.id == "nora-001"
    assert (env.vault / "2 Areas/people/nora/facts/nora-001.md").is_file()


def test_supersede_with_a_new_fact(env: Env) -> None:
    written = memory.supersede(env.cfg, "sarah-chen-001", fact="Sarah Chen now leads the platform team")
    assert written.fact is not None and written.previous is not None
    old = env.fact(SARAH, "sarah-chen-001")
    assert old["status"] == "superseded" and old["supersededBy"] == written.fact.id
    note = (env.vault / f"{SARAH_DIR}/facts/sarah-chen-001.md").read_text()
    assert "status: superseded" in note and f'"[[{written.fact.id}]]"' in note


def test_supersede_by_an_existing_fact_and_unknown_successor(env: Env) -> None:
    memory.supersede(env.cfg, "sarah-chen-003", by="sarah-chen-004")
    assert env.fact(SARAH, "sarah-chen-003")["supersededBy"] == "sarah-chen-004"
    with pytest.raises(NotFound):
        memory.supersede(env.cfg, "sarah-chen-004", by="sarah-chen-999")
    with pytest.raises(Invalid) as caught:
        memory.supersede(env.cfg, "sarah-chen-004")
    assert caught.value.field == "by"


def test_forget_keeps_a_copy_in_the_trash(env: Env) -> None:
    memory.forget(env.cfg, "sarah-chen-004")
    assert all(f.get("id") != "sarah-chen-004" for f in env.facts(SARAH))
    assert not (env.vault / f"{SARAH_DIR}/facts/sarah-chen-004.md").exists()
    kept = list((StateFiles(env.cfg.state_dir).root / "trash").rglob("sarah-chen-004.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["id"] == "sarah-chen-004"
    with pytest.raises(NotFound):
        get_fact(env.cfg, "sarah-chen-004")


def test_patch_sets_and_removes_fields(env: Env) -> None:
    memory.patch(env.cfg, "sarah-chen-001", {"category": "work", "source": None})
    fact = env.fact(SARAH, "sarah-chen-001")
    assert fact["category"] == "work" and "source" not in fact
    assert "category: work" in (env.vault / f"{SARAH_DIR}/facts/sarah-chen-001.md").read_text()
    with pytest.raises(Invalid) as caught:
        memory.patch(env.cfg, "sarah-chen-001", {"id": "x"})
    assert caught.value.field == "id"


def test_a_stale_etag_changes_nothing(env: Env) -> None:
    tag = get_fact(env.cfg, "sarah-chen-001").etag
    note = env.vault / f"{SARAH_DIR}/facts/sarah-chen-001.md"
    note.write_text(note.read_text().replace("category: context", "category: career"))  # the person, meanwhile
    before = env.items_path(SARAH).read_bytes()
    with pytest.raises(memory.Stale):
        memory.patch(env.cfg, "sarah-chen-001", {"category": "x"}, if_match=tag)
    assert env.items_path(SARAH).read_bytes() == before
    fresh = get_fact(env.cfg, "sarah-chen-001").etag
    memory.patch(env.cfg, "sarah-chen-001", {"source": "chat"}, if_match=fresh)
    assert env.fact(SARAH, "sarah-chen-001")["category"] == "career"  # the person's edit came in with the pass


@pytest.mark.parametrize(
    "entity", ["../outside", "areas/../../outside", "/etc", "areas/people/a\x00b", "areas", "areas/people/x/..", ""]
)
def test_entity_names_cannot_leave_life(env: Env, entity: str) -> None:
    with pytest.raises(Invalid):
        memory.remember(env.cfg, entity, "x", create=True)
    assert not (env.root / "outside").exists()


def test_short_ids_shared_by_entities_need_the_entity(env: Env) -> None:
    for rel in ("areas/people/kim", "areas/people/lee"):
        (env.life / rel).mkdir(parents=True)
        (env.life / rel / "items.json").write_text('[{"id": "f001", "fact": "a fact"}]\n')
    with pytest.raises(Ambiguous) as caught:
        get_fact(env.cfg, "f001")
    assert caught.value.entities == ["areas/people/kim", "areas/people/lee"]
    assert get_fact(env.cfg, "f001", "areas/people/lee").entity == "areas/people/lee"


def test_concurrent_remembers_all_land_with_distinct_ids(env: Env) -> None:
    results: list[str] = []
    errors: list[BaseException] = []

    def one(n: int) -> None:
        try:
            written = memory.remember(env.cfg, SARAH, f"Concurrent fact {n}")
            assert written.fact is not None
            results.append(written.fact.id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(results)) == 8
    texts = {f["fact"] for f in env.facts(SARAH)}
    assert {f"Concurrent fact {n}" for n in range(8)} <= texts
    assert all((env.vault / f"{SARAH_DIR}/facts/{i}.md").is_file() for i in results)


def test_a_write_waits_for_a_held_lock_and_gives_up_when_bounded(env: Env) -> None:
    with run_lock(StateFiles(env.cfg.state_dir).lock), pytest.raises(LockHeld):
        memory.remember(env.cfg, SARAH, "waits", wait=0)
    entity = get_entity(env.cfg, SARAH)
    assert all(f.record.get("fact") != "waits" for f in entity.facts)


def test_vault_note_names_count_as_taken(env: Env, tmp_path: Path) -> None:
    (env.vault / f"{SARAH_DIR}/facts/sarah-chen-007.md").write_text("---\nid: sarah-chen-007\n---\nmade by hand\n")
    written = memory.remember(env.cfg, SARAH, "Not a clash")
    assert written.fact is not None and written.fact.id == "sarah-chen-008"
