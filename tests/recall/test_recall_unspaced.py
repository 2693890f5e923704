"""Recall of questions written without spaces (Chinese here): asked whole, as a person types them, on the CLI, over
``GET /recall`` and in process, against vault-example with one more Chinese entity. Each of these questions found
nothing when an unspaced run was one phrase of character pairs that only a text holding the whole question matched."""

# Full-width punctuation is what people type.
# ruff: noqa: RUF001

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from helpers.server import AUTH, running_server
from helpers.twoway import LIWEI, TODAY, Env

from vaultsync.app.recall import RecallOptions, recall
from vaultsync.app.sync import PassOptions, sync

WANG = "areas/people/wang-fang"
# (question, a word the fact or line that answers it holds)
ASKED = [
    ("李伟的工厂参观是哪天？", "工厂参观"),
    ("王芳喜欢喝什么茶", "乌龙茶"),
    ("样品什么时候发货？", "发货"),
]


@pytest.fixture
def zh(env: Env) -> Env:
    """The example with 王芳, whose facts and summary are Chinese only, and one of her lines in a daily note."""
    folder = env.life / WANG
    folder.mkdir(parents=True)
    facts = [
        {"id": "wang-fang-001", "fact": "王芳喜欢喝乌龙茶，不喝咖啡", "category": "preference", "status": "active"},
        {"id": "wang-fang-002", "fact": "王芳负责明湖光电的质量检验", "category": "context", "status": "active"},
    ]
    (folder / "items.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    (folder / "summary.md").write_text("# 王芳\n\n明湖光电的质检主管，和李伟一个团队。\n", encoding="utf-8")
    report = sync(env.cfg, PassOptions(today=TODAY))
    assert report.exit_code == 0, report.to_json()
    return env


def _texts(hits: list[dict[str, object]]) -> list[str]:
    return [str(h["text"]) for h in hits]


@pytest.mark.parametrize(("question", "answer"), ASKED)
def test_a_whole_chinese_question_finds_its_fact(zh: Env, question: str, answer: str) -> None:
    hits = recall(zh.cfg, question, RecallOptions(limit=5)).hits
    assert any(answer in h.text for h in hits), [h.text for h in hits]


def test_the_questions_on_the_cli_and_over_http(zh: Env) -> None:
    for question, answer in ASKED:
        cmd = [sys.executable, "-m", "vaultsync.cli", "recall", question, "--json", "--config", str(zh.config_path)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
        assert any(answer in t for t in _texts(json.loads(out)["hits"][:5])), (question, out)
    with running_server(zh.config_path) as url:
        for question, answer in ASKED:
            got = httpx.get(f"{url}/recall", params={"q": question, "limit": 5}, headers=AUTH, timeout=60)
            assert got.status_code == 200, got.text
            assert any(answer in t for t in _texts(got.json()["hits"])), (question, got.text)
        asked = {"q": "王芳喜欢喝什么茶？", "budget": 2000}
        context = httpx.get(f"{url}/context", params=asked, headers=AUTH, timeout=60).json()
        assert [e["entity"] for e in context["entities"]] == [WANG], context
        assert any("乌龙茶" in f["fact"] for f in context["entities"][0]["facts"])


def test_a_chinese_name_gets_the_entity_boost(zh: Env) -> None:
    hits = recall(zh.cfg, "王芳 乌龙茶", RecallOptions(explain=True)).hits
    assert hits[0].id == "wang-fang-001"
    assert hits[0].explain and hits[0].explain["entity"] == 0.7
    inside = recall(zh.cfg, "李伟的工厂参观是哪天", RecallOptions(explain=True)).hits
    assert inside[0].entity == LIWEI and inside[0].id == "li-wei-004"
    assert inside[0].explain and inside[0].explain["entity"] == 0.7 and inside[0].explain["when"] == 0.1
    cmd = [sys.executable, "-m", "vaultsync.cli", "recall", "王芳 乌龙茶", "--explain", "--config", str(zh.config_path)]
    shown = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
    assert "entity" in shown and "乌龙茶" in shown


def test_particles_do_not_decide_the_ranking(zh: Env) -> None:
    """A line full of the question's particles (的, 是, 什么) does not pass the fact that holds its content."""
    note = zh.workspace / "memory/2026-12-01.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n- 这是什么的？是的，是的。\n", encoding="utf-8")
    sync(zh.cfg, PassOptions(today=TODAY))
    hits = recall(zh.cfg, "王芳的是什么茶？", RecallOptions(limit=3)).hits
    assert hits[0].id == "wang-fang-001"
    assert all("是的，是的" not in h.text for h in hits)
