"""remember, supersede and forget repeated as a retrying program repeats them (``vaultsync.app.memory``), on a
synced copy of vault-example with real git: the memory changes once, git gets one commit, and each repeat says
``already``; a second, different successor is refused naming the first."""

from __future__ import annotations

import threading
from unicodedata import normalize

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.app import memory
from vaultsync.errors import NotFound, Stale, Superseded
from vaultsync.memory.same_fact import sentence_key


def commits(env: Env) -> int:
    return int(env.git("rev-list", "--count", "HEAD").strip())


def test_each_write_repeated_three_times_changes_the_memory_once_with_one_commit(env: Env) -> None:
    start = commits(env)
    remembered = [memory.remember(env.cfg, SARAH, "Sarah Chen keeps bees on the roof") for _ in range(3)]
    assert [w.already for w in remembered] == [False, True, True]
    assert {w.fact.id for w in remembered if w.fact} == {"sarah-chen-007"}
    assert [f["fact"] for f in env.facts(SARAH)].count("Sarah Chen keeps bees on the roof") == 1
    assert commits(env) == start + 1
    assert remembered[1].report.commits == [] and remembered[1].to_json()["already"] is True

    replaced = [memory.supersede(env.cfg, "sarah-chen-007", fact="Sarah Chen gave the bees away") for _ in range(3)]
    assert [w.already for w in replaced] == [False, True, True]
    assert {w.fact.id for w in replaced if w.fact} == {"sarah-chen-008"}
    assert [f["id"] for f in env.facts(SARAH)][-2:] == ["sarah-chen-007", "sarah-chen-008"]
    assert env.fact(SARAH, "sarah-chen-007")["supersededBy"] == "sarah-chen-008"
    assert commits(env) == start + 2

    forgotten = [memory.forget(env.cfg, "sarah-chen-004") for _ in range(3)]
    assert [w.already for w in forgotten] == [False, True, True]
    assert all(f["id"] != "sarah-chen-004" for f in env.facts(SARAH))
    assert commits(env) == start + 3
    assert env.git("status", "--porcelain").strip() == ""


def test_the_same_sentence_is_recognised_through_spacing_case_and_a_final_stop(env: Env) -> None:
    held = env.fact(SARAH, "sarah-chen-004")["fact"]
    again = memory.remember(env.cfg, SARAH, "  " + held.upper().replace(" ", "\t  ") + ". ")
    assert again.already and again.fact is not None and again.fact.id == "sarah-chen-004"
    assert again.fact.record["fact"] == held  # the stored fact, not the new spelling
    other = memory.remember(env.cfg, SARAH, held + " and a printed one")
    assert not other.already and other.fact is not None and other.fact.id == "sarah-chen-007"


def test_a_superseded_sentence_is_remembered_again_as_a_new_fact(env: Env) -> None:
    old = env.fact(SARAH, "sarah-chen-002")["fact"]  # superseded by sarah-chen-005: no longer true
    written = memory.remember(env.cfg, SARAH, old)
    assert not written.already and written.fact is not None and written.fact.id == "sarah-chen-007"
    assert env.fact(SARAH, "sarah-chen-007")["status"] == "active"


def test_superseding_again_with_another_successor_is_refused_naming_the_first(env: Env) -> None:
    before = env.items_path(SARAH).read_bytes()
    with pytest.raises(Superseded) as raised:
        memory.supersede(env.cfg, "sarah-chen-002", fact="The check-in moved to Fridays")
    assert raised.value.successor == "sarah-chen-005" and raised.value.status == 409
    assert raised.value.detail()["successor"] == "sarah-chen-005"
    assert "sarah-chen-005" in raised.value.line()
    with pytest.raises(Superseded):
        memory.supersede(env.cfg, "sarah-chen-002", by="sarah-chen-006")
    assert env.items_path(SARAH).read_bytes() == before


def test_superseding_again_with_the_same_successor_answers_it_even_with_an_old_etag(env: Env) -> None:
    held = env.fact(SARAH, "sarah-chen-005")["fact"]
    start = commits(env)
    by_id = memory.supersede(env.cfg, "sarah-chen-002", by="sarah-chen-005", if_match='"an-old-etag"')
    by_text = memory.supersede(env.cfg, "sarah-chen-002", fact=held.lower() + ".")
    for written in (by_id, by_text):
        assert written.already and written.fact is not None and written.fact.id == "sarah-chen-005"
        assert written.previous is not None and written.previous.id == "sarah-chen-002"
    assert commits(env) == start
    with pytest.raises(Stale):  # a first supersede still checks the version it was given
        memory.supersede(env.cfg, "sarah-chen-001", fact="Sarah Chen left Acme Corp", if_match='"an-old-etag"')


def test_a_successor_the_entity_already_says_is_taken_not_copied(env: Env) -> None:
    said = env.fact(SARAH, "sarah-chen-006")["fact"]
    written = memory.supersede(env.cfg, "sarah-chen-001", fact=said)
    assert not written.already and written.fact is not None and written.fact.id == "sarah-chen-006"
    assert env.fact(SARAH, "sarah-chen-001")["supersededBy"] == "sarah-chen-006"
    assert len(env.facts(SARAH)) == 6


def test_forgetting_a_fact_never_held_is_not_found(env: Env) -> None:
    with pytest.raises(NotFound):
        memory.forget(env.cfg, "sarah-chen-099")
    with pytest.raises(NotFound):
        memory.forget(env.cfg, "sarah-chen-099", entity=SARAH)


def test_a_fact_the_agent_removed_is_gone_already_by_the_base(env: Env) -> None:
    env.agent_edit(SARAH, lambda facts: facts.pop(3))  # sarah-chen-004, removed by the agent itself
    env.sync()
    assert not (env.vault / f"{SARAH_DIR}/facts/sarah-chen-004.md").exists()
    for entity in (None, SARAH, "sarah-chen"):
        assert memory.forget(env.cfg, "sarah-chen-004", entity=entity).already
    with pytest.raises(NotFound):  # held by Sarah Chen, not by another entity
        memory.forget(env.cfg, "sarah-chen-004", entity="areas/people/miguel-ortiz")


def test_a_forgotten_fact_is_gone_already_by_the_trash_when_the_base_is_lost(env: Env) -> None:
    memory.forget(env.cfg, "sarah-chen-004")
    env.cfg.state_dir.joinpath("base.sqlite").unlink()
    assert memory.forget(env.cfg, "sarah-chen-004", entity=SARAH).already


def test_two_copies_of_one_call_at_once_change_the_memory_once(env: Env) -> None:
    start = commits(env)
    answers: list[memory.Written] = []

    def both(call: object) -> None:
        threads = [threading.Thread(target=lambda: answers.append(call())) for _ in range(2)]  # type: ignore[operator]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    both(lambda: memory.remember(env.cfg, SARAH, "Sarah Chen speaks Dutch"))
    both(lambda: memory.forget(env.cfg, "sarah-chen-003"))
    assert sorted(w.already for w in answers) == [False, False, True, True]
    assert [f["fact"] for f in env.facts(SARAH)].count("Sarah Chen speaks Dutch") == 1
    assert all(f["id"] != "sarah-chen-003" for f in env.facts(SARAH))
    assert commits(env) == start + 2


@given(st.text(max_size=40), st.sampled_from([" ", "\t", "\n", "  "]))
def test_the_sentence_key_ignores_spacing_case_and_one_final_stop(text: str, gap: str) -> None:
    spaced = gap + gap.join(text.split(" ")) + gap
    assert sentence_key(spaced) == sentence_key(text)
    assert sentence_key(text.upper()) == sentence_key(text.lower()) or not text.isascii()
    assert sentence_key(text + ".") == sentence_key(text) or normalize("NFKC", text).rstrip().endswith(".")
    assert sentence_key(text + " Berlin") != sentence_key(text + " Bonn")  # a word apart: two facts
