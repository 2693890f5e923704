"""The context a plugin prepends to a turn (``GET /context``) and the daily-note append it captures a turn with
(``POST /daily``): against the example memory, in process and through a real ``vaultsync serve``."""

from __future__ import annotations

import json
from datetime import datetime

import httpx
import pytest
from helpers.server import AUTH, running_server
from helpers.twoway import LIWEI, SARAH, Env

from vaultsync.app.capture import append_daily
from vaultsync.app.context import Context, context
from vaultsync.errors import Invalid, UsageError


def test_a_named_entity_comes_first_with_its_current_facts_only(env: Env) -> None:
    found = context(env.cfg, "What should I prepare for my meeting with Sarah Chen?", 4000)
    assert found.entities[0]["entity"] == SARAH
    ids = [f["id"] for f in found.entities[0]["facts"]]
    assert "sarah-chen-005" in ids and "sarah-chen-002" not in ids  # 002 was superseded by 005
    assert found.text.startswith("## Sarah Chen (areas/people/sarah-chen)")
    assert "Tuesdays at 10:00" not in found.text
    assert "hardware engineering manager" in found.entities[0]["summary"]
    assert all(h["status"] != "superseded" for h in found.hits)
    assert not {(h["entity"], h["id"]) for h in found.hits} & {(SARAH, i) for i in ids}


def test_the_budget_holds_whole_lines_and_says_what_it_left_out(env: Env) -> None:
    whole = context(env.cfg, "Sarah Chen Project Atlas check-in", 20_000)
    small = context(env.cfg, "Sarah Chen Project Atlas check-in", 300)
    assert not whole.truncated and small.truncated
    assert len(small.text) <= 300 and small.text.startswith("## Sarah Chen")
    lines = iter(whole.text.splitlines())
    assert all(line in lines for line in small.text.splitlines())  # whole lines, in the same order


def test_a_message_naming_nothing_known_gets_no_context(env: Env) -> None:
    assert context(env.cfg, "zzqx ok?", 2000).text == ""
    assert context(env.cfg, "?!", 2000).to_json()["entities"] == []
    with pytest.raises(UsageError):
        context(env.cfg, "Sarah", 0)


def test_append_creates_then_extends_todays_note_and_commits_it(env: Env) -> None:
    first = append_daily(env.cfg, "Person: hello\nAgent: hi", source="openclaw", now=datetime(2027, 1, 5, 9, 7))
    second = append_daily(env.cfg, "Person: more", now=datetime(2027, 1, 5, 14, 30))
    note = env.workspace / "memory/2027-01-05.md"
    expected = "# 2027-01-05\n\n## 09:07 openclaw\n\nPerson: hello\nAgent: hi\n\n## 14:30\n\nPerson: more\n"
    assert note.read_text() == expected
    assert first.path == "memory/2027-01-05.md" and first.report.commits and second.report.commits
    assert env.git("status", "--porcelain").strip() == ""
    assert "Person: more" in env.git("show", "HEAD:" + _daily_in_vault(env, "2027-01-05.md"))


def test_append_keeps_what_the_agent_wrote_and_refuses_bad_input(env: Env) -> None:
    note = env.workspace / "memory/2026-12-01.md"
    before = note.read_bytes()
    append_daily(env.cfg, "Captured line", now=datetime(2026, 12, 1, 18, 0))
    after = note.read_bytes()
    assert after.startswith(before) and after.endswith(b"## 18:00\n\nCaptured line\n")
    for text, source in [("   ", None), ("ok", "two\nlines"), ("\ud800", None)]:
        with pytest.raises(Invalid):
            append_daily(env.cfg, text, source=source)
    assert note.read_bytes() == after


@pytest.mark.parametrize(
    "message", ["thanks, that is all for today", "write me a haiku about the sea", "good morning!", "ok, tell me"]
)
def test_small_talk_gets_nothing_although_each_of_its_words_is_in_some_note(env: Env, message: str) -> None:
    assert context(env.cfg, message, 2000).to_json() | {"query": ""} == Context("", 2000).to_json()


def test_the_floor_leaves_out_weak_memories_but_never_a_named_entity(env: Env) -> None:
    weak = "when does the DHL shipment arrive?"  # its best line scores about 4 on the example memory
    assert any("DHL" in h["text"] for h in context(env.cfg, weak, 2000).hits)
    assert context(env.cfg, weak, 2000, min_score=5.0).text == ""
    strong = context(env.cfg, "Which hotel options did we shortlist in Shenzhen?", 2000, min_score=5.0)
    assert "Nanshan" in strong.text and all(h["score"] >= 5.0 for h in strong.hits)
    named = context(env.cfg, "Tell me about Sarah Chen", 2000, min_score=1000.0)
    assert named.entities[0]["entity"] == SARAH and named.hits == []
    assert named.text.startswith("## Sarah Chen")


def test_both_routes_over_http(env: Env) -> None:
    with running_server(env.config_path) as url:
        got = httpx.get(f"{url}/context", params={"q": "Sarah Chen agenda", "budget": 600}, headers=AUTH, timeout=60)
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["entities"][0]["entity"] == SARAH and len(body["text"]) <= 600
        assert httpx.get(f"{url}/context", params={"q": "x", "budget": 5}, headers=AUTH).status_code == 422
        floored = httpx.get(f"{url}/context", params={"q": "DHL shipment", "min_score": 1000}, headers=AUTH, timeout=60)
        assert floored.status_code == 200 and floored.json()["text"] == ""
        assert httpx.get(f"{url}/context", params={"q": "DHL", "min_score": -1}, headers=AUTH).status_code == 422
        assert httpx.get(f"{url}/context", params={"q": "Sarah"}).status_code == 401
        headers = {**AUTH, "X-Vaultsync-Client": "openclaw"}
        made = httpx.post(f"{url}/daily", json={"text": "Person: remind me"}, headers=headers, timeout=120)
        assert made.status_code == 201, made.text
        assert made.json()["heading"].endswith(" openclaw") and made.json()["commits"]
        assert "Person: remind me" in (env.workspace / made.json()["path"]).read_text()
        bad = httpx.post(f"{url}/daily", json={"text": "x", "source": "a#b"}, headers=AUTH, timeout=60)
        assert bad.status_code == 422
        seen = httpx.get(f"{url}/context", params={"q": "remind me"}, headers=AUTH, timeout=60).json()
        assert any(h["kind"] == "daily" and "remind me" in h["text"] for h in seen["hits"])


def _daily_in_vault(env: Env, name: str) -> str:
    listed = env.git("ls-files").splitlines()
    return next(p for p in listed if p.endswith(name))


def test_a_chinese_message_names_its_entity_without_spaces(env: Env) -> None:
    """An unspaced message is one run of text: the name in it is found as a part of it, not as a word of its own."""
    folder = env.life / "areas/people/wang-fang"
    folder.mkdir(parents=True)
    fact = {"id": "wang-fang-001", "fact": "王芳喜欢喝乌龙茶、不喝咖啡", "status": "active"}
    (folder / "items.json").write_text(json.dumps([fact], ensure_ascii=False), encoding="utf-8")
    (folder / "summary.md").write_text("# 王芳\n\n明湖光电的质检主管。\n", encoding="utf-8")
    assert env.sync().exit_code == 0
    found = context(env.cfg, "王芳喜欢喝什么茶?", 2000)
    assert [e["entity"] for e in found.entities] == ["areas/people/wang-fang"]
    assert found.text.startswith("## 王芳 (areas/people/wang-fang)") and "乌龙茶" in found.text
    assert context(env.cfg, "李伟的工厂参观是哪天", 2000).entities[0]["entity"] == LIWEI
    assert context(env.cfg, "芳喜欢喝什么茶", 2000).entities == []  # a part of a name names nobody


def _entity(env: Env, rel: str, facts: list[str], summary: str | None = None) -> None:
    folder = env.life / rel
    folder.mkdir(parents=True)
    slug = rel.rsplit("/", 1)[-1]
    records = [{"id": f"{slug}-{n:03d}", "fact": f, "status": "active"} for n, f in enumerate(facts, 1)]
    (folder / "items.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    if summary is not None:
        (folder / "summary.md").write_text(summary, encoding="utf-8")


def test_an_entity_with_facts_and_no_summary_is_named(env: Env) -> None:
    _entity(env, "areas/people/bo-lindqvist", ["Bo Lindqvist runs the Malmo test lab"])
    found = context(env.cfg, "Is Bo Lindqvist joining the offsite?", 2000)
    assert [e["entity"] for e in found.entities] == ["areas/people/bo-lindqvist"]
    assert found.text.startswith("## bo-lindqvist (areas/people/bo-lindqvist)")
    assert "Malmo test lab [bo-lindqvist-001]" in found.text
    assert found.entities[0]["note"] is None  # no pass has written its note yet: no path that leads nowhere
    assert env.sync().exit_code == 0
    note = context(env.cfg, "Is Bo Lindqvist joining the offsite?", 2000).entities[0]["note"]
    assert note is not None and (env.vault / note).is_file()


def test_an_entity_many_other_summaries_mention_is_named(env: Env) -> None:
    mention = "Priya Raman reviewed it. Priya Raman signed off. Ask Priya Raman, or Priya Raman's team."
    for n in range(14):
        _entity(env, f"projects/rollout-{n:02d}", [f"Rollout {n} ships in spring"], f"# Rollout {n}\n\n{mention}\n")
    _entity(
        env,
        "areas/people/priya-raman",
        ["Priya Raman prefers written agendas"],
        "# Priya Raman\n\nQuality lead at the Eindhoven plant; joined from a medical-device maker in 2021.\n",
    )
    found = context(env.cfg, "What does Priya Raman prefer?", 4000)
    assert found.entities and found.entities[0]["entity"] == "areas/people/priya-raman"
    assert "prefers written agendas" in found.text


def test_a_long_message_still_names_the_entity_it_holds(env: Env) -> None:
    """Words rarer than the name (those of other notes) took every place among the summaries looked at."""
    record = {"lease": "Alder Street", "deposit": "renewed", "supplier": "Brightlake Optics", "shorthand": "afternoons"}
    message = f"Can you check this with Sarah Chen?\n{json.dumps(record, indent=2)}"
    found = context(env.cfg, message, 4000)
    assert found.entities and found.entities[0]["entity"] == SARAH
    assert found.text.startswith("## Sarah Chen (areas/people/sarah-chen)")


def test_a_named_entitys_summary_is_not_repeated_among_related_memories(env: Env) -> None:
    found = context(env.cfg, "Sarah Chen hardware engineering manager", 20_000)
    assert found.entities[0]["entity"] == SARAH
    assert not [h for h in found.hits if h["kind"] == "summary" and h["entity"] == SARAH]
    assert found.text.count("the lead of Project Atlas") == 1


def test_an_entity_whose_every_name_word_other_entities_share_is_named(env: Env) -> None:
    """``bo`` and ``lindqvist`` each name five entities, too many for ranking to take either as a name; the
    message still holds the whole name of one of them."""
    for other in ("bo-ek", "bo-berg", "bo-holm", "bo-sand", "anna-lindqvist", "erik-lindqvist", "karl-lindqvist"):
        _entity(env, f"areas/people/{other}", [f"{other} works at the Malmo office"])
    _entity(env, "areas/people/lisa-lindqvist", ["Lisa Lindqvist works in Lund"])
    _entity(env, "areas/people/bo-lindqvist", ["Bo Lindqvist runs the Malmo test lab"])
    found = context(env.cfg, "Is Bo Lindqvist joining the offsite?", 2000)
    assert [e["entity"] for e in found.entities] == ["areas/people/bo-lindqvist"]
