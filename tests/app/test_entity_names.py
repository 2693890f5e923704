"""One name rule for a new entity, checked before anything is written: its folder name leaves room for the fact
ids and note names made from it, so a pass can hold every one of them; a long name is refused with the limit and
the fix (a shorter slug)."""

from __future__ import annotations

import json

import pytest
from helpers.twoway import Env
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.app import memory
from vaultsync.errors import Invalid
from vaultsync.memory.identity import next_fact_ids
from vaultsync.names import MAX_NAME, MAX_SLUG, name_problem, slug_problem

LONG = "深圳市前海微众银行股份有限公司上海分公司数据科学与人工智能研究院区块链部技术组"  # 39 characters, 117 bytes
FITS = LONG[:36]  # 108 bytes


def test_a_name_too_long_for_its_fact_ids_is_refused_before_anything_is_written(env: Env) -> None:
    assert len(LONG.encode()) == 117 and name_problem(LONG) is None  # a folder name the pass would take
    before = env.snapshot()
    with pytest.raises(Invalid) as caught:
        memory.remember(env.cfg, f"areas/companies/{LONG}", "A bank in Shenzhen", create=True)
    assert caught.value.field == "entity"
    message = str(caught.value)
    assert f"at most {MAX_SLUG} bytes" in message and "117 bytes" in message and "shorter slug" in message
    assert not (env.life / "areas/companies" / LONG).exists()
    assert env.snapshot() == before


def test_a_name_at_the_limit_is_made_and_every_later_pass_holds_it(env: Env) -> None:
    assert len(FITS.encode()) == MAX_SLUG
    written = memory.remember(env.cfg, f"areas/companies/{FITS}", "A bank in Shenzhen", create=True)
    assert written.fact is not None and written.fact.id == f"{FITS}-001"
    assert (env.vault / written.fact.note).is_file()
    report = env.sync()
    assert report.exit_code == 0, report.problems


def test_an_id_the_entitys_own_pattern_would_push_past_the_rule_is_refused(env: Env) -> None:
    stem = "n" * (MAX_NAME - 3)
    folder = env.life / "areas/people/nn"
    folder.mkdir(parents=True)
    (folder / "items.json").write_text(json.dumps([{"id": f"{stem}999", "fact": "Old", "status": "active"}]))
    before = (folder / "items.json").read_bytes()
    with pytest.raises(Invalid) as caught:
        memory.remember(env.cfg, "areas/people/nn", "New")
    assert caught.value.field == "entity" and f"longer than {MAX_NAME} bytes" in str(caught.value)
    assert "shorter slug" in str(caught.value)
    assert (folder / "items.json").read_bytes() == before


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=60)


@settings(max_examples=300)
@given(names)
def test_every_name_made_from_an_accepted_slug_passes_the_rule(slug: str) -> None:
    if slug_problem(slug) is not None:
        assert name_problem(slug) is not None or len(slug.encode()) > MAX_SLUG
        return
    made = [*next_fact_ids(slug, [], [], 2), f"{slug}-m1000", f"{slug}-1a2b3c~99", f"{slug}-99999"]
    assert [n for n in made if name_problem(n)] == []
