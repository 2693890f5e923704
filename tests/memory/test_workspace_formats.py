"""The shapes real memory trees come in, each rendered to exact vault content and round-tripped.

Every fixture is made up here, in the shapes found in public agent workspaces: items.json as a bare array or as
a wrapper object, facts without ids, snake_case ``superseded_by`` holding free text, ``supersededBy: null``,
``date`` instead of ``timestamp``, statuses beyond active/superseded, extra keys of every JSON type, ids reused
across entities, Chinese text, a large fact file, and the files that are not facts at all
(``life/index.md``, ``items.yaml``, daily notes kept inside an entity folder).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from helpers.inputs import (
    Env,
    assert_exit,
    assert_quiet_second_pass,
    edit_body,
    entity_note,
    errors,
    fact,
    first_pass_clean,
    json_type_equal,
    make_env,
    problems_for,
    second_env,
)

from vaultsync.model import ExitCode, Severity

AREAS = "2 Areas"


def managed(files: dict[str, bytes]) -> dict[str, str]:
    """The notes a pass renders from the memory tree (PARA folders and Daily), as text."""
    roots = ("1 Projects/", "2 Areas/", "3 Resources/", "4 Archives/", "Daily/")
    return {k: v.decode() for k, v in files.items() if k.startswith(roots)}


# -- bare array --------------------------------------------------------------------------------------------
def test_bare_array_renders_exact_notes_and_round_trips(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity(
        "areas/people/sarah",
        [
            fact("sarah-001", "Sarah leads the design team", category="work"),
            fact("sarah-002", "Sarah moved to Lisbon", category="status", timestamp="2026-01-20"),
        ],
        "# Sarah Okafor\n\nDesign lead, met through the studio.\n",
    )

    vault = managed(first_pass_clean(env))

    facts_dir = f"{AREAS}/people/sarah/facts"
    assert vault == {
        f"{AREAS}/people/sarah/sarah.md": entity_note(
            "kind: people\n"
            "aliases:\n  - Sarah Okafor\n"
            "tags:\n  - memory/person\n"
            "facts_active: 2\n"
            "facts_superseded: 0\n"
            "related: []\n"
            "updated: 2026-01-20\n",
            "# Sarah Okafor\n\nDesign lead, met through the studio.\n",
            facts_dir,
        ),
        f"{facts_dir}/sarah-001.md": (
            "---\n"
            "id: sarah-001\n"
            "category: work\n"
            "timestamp: 2026-01-15\n"
            "source: conversation\n"
            "status: active\n"
            'entity: "[[sarah|Sarah Okafor]]"\n'
            "---\n"
            "Sarah leads the design team\n"
        ),
        f"{facts_dir}/sarah-002.md": (
            "---\n"
            "id: sarah-002\n"
            "category: status\n"
            "timestamp: 2026-01-20\n"
            "source: conversation\n"
            "status: active\n"
            'entity: "[[sarah|Sarah Okafor]]"\n'
            "---\n"
            "Sarah moved to Lisbon\n"
        ),
    }
    assert_quiet_second_pass(env)


# -- wrapper objects ---------------------------------------------------------------------------------------
def test_wrapper_entity_facts_keeps_wrapper_and_uses_its_name(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    doc = {
        "entity": "Northwind Ltd",
        "entityType": "company",
        "category": "client",
        "facts": [fact("nw-001", "Northwind pays on net-30 terms", category="billing")],
    }
    env.entity("areas/companies/northwind", doc)

    vault = managed(first_pass_clean(env))

    facts_dir = f"{AREAS}/companies/northwind/facts"
    assert vault == {
        f"{AREAS}/companies/northwind/northwind.md": entity_note(
            "kind: companies\n"
            "aliases:\n  - Northwind Ltd\n"
            "tags:\n  - memory/company\n"
            "facts_active: 1\n"
            "facts_superseded: 0\n"
            "related: []\n"
            "updated: 2026-01-15\n",
            "",
            facts_dir,
        ),
        f"{facts_dir}/nw-001.md": (
            "---\n"
            "id: nw-001\n"
            "category: billing\n"
            "timestamp: 2026-01-15\n"
            "source: conversation\n"
            "status: active\n"
            'entity: "[[northwind|Northwind Ltd]]"\n'
            "---\n"
            "Northwind pays on net-30 terms\n"
        ),
    }
    assert_quiet_second_pass(env)

    # An edit written back keeps the wrapper object and its other keys exactly as they were.
    before = (env.life / "areas/companies/northwind/items.json").read_bytes()
    edit_body(env, f"{facts_dir}/nw-001.md", "net-30", "net-45")
    assert_exit(env.sync(), ExitCode.CLEAN)
    after = (env.life / "areas/companies/northwind/items.json").read_bytes()
    assert after == before.replace(b"net-30", b"net-45")


def test_wrapper_type_name_items_gives_the_display_name_without_summary(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    doc = {
        "type": "project",
        "name": "Allotment Garden Plan",
        "items": [
            {
                "fact": "Raised beds go along the south fence",
                "source": "chat 2026-01-30",
                "date": "2026-01-30",
                "status": "active",
                "category": "layout",
            },
        ],
    }
    env.entity("projects/garden", doc)

    files = first_pass_clean(env)
    vault = managed(files)

    note_names = [k for k in vault if k.startswith("1 Projects/garden/facts/")]
    assert len(note_names) == 1
    assert re.fullmatch(r"1 Projects/garden/facts/garden-[0-9a-f]{6}\.md", note_names[0])
    assert vault == {
        "1 Projects/garden/garden.md": entity_note(
            "kind: projects\n"
            "aliases:\n  - Allotment Garden Plan\n"
            "tags:\n  - memory/project\n"
            "facts_active: 1\n"
            "facts_superseded: 0\n"
            "related: []\n"
            "updated: 2026-01-30\n",
            "",
            "1 Projects/garden/facts",
        ),
        note_names[0]: (
            "---\n"
            "source: chat 2026-01-30\n"
            "timestamp: 2026-01-30\n"
            "status: active\n"
            "category: layout\n"
            'entity: "[[garden|Allotment Garden Plan]]"\n'
            "---\n"
            "Raised beds go along the south fence\n"
        ),
    }
    assert_quiet_second_pass(env)


# -- facts without ids -------------------------------------------------------------------------------------
def _idless_items() -> list[dict[str, object]]:
    return [
        {"fact": "Wakes up at 7 AM", "source": "chat", "date": "2026-01-30", "status": "active"},
        {"fact": "Prefers tea over coffee", "source": "chat", "date": "2026-01-30", "status": "active"},
        {"fact": "Prefers tea over coffee", "source": "chat", "date": "2026-01-31", "status": "active"},
        {"source": "chat", "date": "2026-01-30", "status": "active", "note": "a fact with no text"},
    ]


def test_facts_without_ids_get_stable_names_without_touching_items_json(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/anna", {"type": "person", "name": "Anna K", "items": _idless_items()})

    first = first_pass_clean(env)
    names = sorted(k for k in first if k.startswith(f"{AREAS}/people/anna/facts/"))
    assert len(names) == 4, names
    assert len({n.lower() for n in names}) == 4
    for name in names:
        assert re.fullmatch(rf"{AREAS}/people/anna/facts/anna-[0-9a-f]{{6}}(~\d+)?\.md", name), name
    assert_quiet_second_pass(env)
    assert sorted(k for k in env.vault_files() if "/facts/" in k) == names

    # A fresh vault over the same memory tree names every fact the same way, note for note.
    fresh = second_env(env, "fresh")
    before = env.memory()
    report = fresh.sync()
    assert_exit(report, ExitCode.CLEAN)
    assert env.memory() == before
    fresh_files = fresh.vault_files()
    assert {k: v for k, v in fresh_files.items() if "/facts/" in k} == {
        k: v for k, v in first.items() if "/facts/" in k
    }


def test_idless_fact_edited_in_the_vault_keeps_its_note_and_gets_no_id(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/anna", _idless_items()[:2])
    first = first_pass_clean(env)
    names = sorted(k for k in first if "/facts/" in k)
    wake = next(n for n in names if "Wakes up at 7 AM" in first[n].decode())

    edit_body(env, wake, "7 AM", "6:30 AM")
    assert_exit(env.sync(), ExitCode.CLEAN)

    items = env.items("areas/people/anna")
    assert items[0] == {"fact": "Wakes up at 6:30 AM", "source": "chat", "date": "2026-01-30", "status": "active"}
    assert items[1] == _idless_items()[1]
    assert sorted(k for k in env.vault_files() if "/facts/" in k) == names
    assert_quiet_second_pass(env)


# -- supersededBy in its several spellings -----------------------------------------------------------------
def test_superseded_by_free_text_stays_text(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = {
        "type": "project",
        "name": "Data Feeds",
        "items": [
            {
                "id": "df-1",
                "fact": "Tested three odds feeds",
                "date": "2026-01-30",
                "status": "superseded",
                "superseded_by": "Conclusion: external feeds are not viable",
            },
            {
                "id": "df-2",
                "fact": "Feed A blocks scripted access",
                "date": "2026-01-30",
                "status": "superseded",
                "superseded_by": "df-3",
            },
            {"id": "df-3", "fact": "Feed A needs a paid key", "date": "2026-01-31", "status": "active"},
        ],
    }
    env.entity("projects/data-feeds", items)

    vault = managed(first_pass_clean(env))

    facts = "1 Projects/data-feeds/facts"
    assert vault[f"{facts}/df-1.md"] == (
        "---\n"
        "id: df-1\n"
        "timestamp: 2026-01-30\n"
        "status: superseded\n"
        'supersededBy: "Conclusion: external feeds are not viable"\n'
        'entity: "[[data-feeds|Data Feeds]]"\n'
        "---\n"
        "Tested three odds feeds\n"
    )
    assert 'supersededBy: "[[df-3]]"\n' in vault[f"{facts}/df-2.md"]
    assert_quiet_second_pass(env)

    raw = (env.life / "projects/data-feeds/items.json").read_bytes()
    edit_body(env, f"{facts}/df-1.md", "three odds feeds", "four odds feeds")
    edit_body(env, f"{facts}/df-2.md", "scripted access", "scripted requests")
    assert_exit(env.sync(), ExitCode.CLEAN)
    after = (env.life / "projects/data-feeds/items.json").read_bytes()
    assert after == raw.replace(b"three odds", b"four odds").replace(b"scripted access", b"scripted requests")
    json_type_equal(
        env.items("projects/data-feeds")["items"][0]["superseded_by"], "Conclusion: external feeds are not viable"
    )


def test_superseded_by_null_is_hidden_in_the_note_and_kept_in_items_json(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = [
        {
            "id": "ab12cd34",
            "fact": "Delivery status is in progress",
            "category": "status",
            "timestamp": "2026-03-06",
            "source": "task:demo-1",
            "status": "superseded",
            "supersededBy": "9876543210123456",
            "relatedEntities": ["projects/pipeline"],
            "lastAccessed": "2026-03-06",
            "accessCount": 1,
        },
        {
            "id": "9876543210123456",
            "fact": "Delivery status is done",
            "category": "status",
            "timestamp": "2026-03-06",
            "source": "task:demo-1",
            "status": "active",
            "supersededBy": None,
            "relatedEntities": ["projects/pipeline"],
            "lastAccessed": "2026-03-06",
            "accessCount": 1,
        },
    ]
    env.entity("resources/delivery-check", items)

    vault = managed(first_pass_clean(env))

    facts = "3 Resources/delivery-check/facts"
    assert vault[f"{facts}/9876543210123456.md"] == (
        "---\n"
        'id: "9876543210123456"\n'
        "category: status\n"
        "timestamp: 2026-03-06\n"
        "source: task:demo-1\n"
        "status: active\n"
        "relatedEntities:\n  - projects/pipeline\n"
        "lastAccessed: 2026-03-06\n"
        "accessCount: 1\n"
        'entity: "[[delivery-check]]"\n'
        "---\n"
        "Delivery status is done\n"
    )
    assert 'supersededBy: "[[9876543210123456]]"\n' in vault[f"{facts}/ab12cd34.md"]
    assert_quiet_second_pass(env)

    raw = (env.life / "resources/delivery-check/items.json").read_bytes()
    edit_body(env, f"{facts}/9876543210123456.md", "is done", "is done and shipped")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert (env.life / "resources/delivery-check/items.json").read_bytes() == raw.replace(
        b"is done", b"is done and shipped"
    )
    got = env.items("resources/delivery-check")
    assert "supersededBy" in got[1] and got[1]["supersededBy"] is None
    assert got[0]["id"] == "ab12cd34" and got[1]["id"] == "9876543210123456"


def test_superseded_by_written_as_a_link_by_the_agent_survives_an_idle_pass(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = [
        fact("z1", "Old plan", status="superseded", supersededBy="[[z2]]"),
        fact("z2", "New plan"),
        fact("z3", "Older plan", status="superseded", supersededBy="[[some other note]]"),
    ]
    folder = env.entity("projects/plans", items)
    raw = (folder / "items.json").read_bytes()
    first_pass_clean(env)

    env.sync()  # nothing edited on either side

    assert (folder / "items.json").read_bytes() == raw


# -- date, statuses ----------------------------------------------------------------------------------------
def test_date_key_and_complete_status_are_kept(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    doc = {
        "project": "Model Lab",
        "created": "2026-01-28",
        "status": "active",
        "facts": [
            {
                "id": "ml-001",
                "type": "milestone",
                "fact": "Lab set up",
                "date": "2026-01-28",
                "source": "research",
                "tags": ["setup", "lab"],
                "status": "active",
            },
            {
                "id": "ml-002",
                "type": "milestone",
                "fact": "Baseline model trained",
                "date": "2026-01-29",
                "source": "research",
                "tags": ["model"],
                "status": "complete",
            },
        ],
    }
    env.entity("projects/model-lab", doc)

    vault = managed(first_pass_clean(env))

    note = vault["1 Projects/model-lab/facts/ml-002.md"]
    assert note == (
        "---\n"
        "id: ml-002\n"
        "type: milestone\n"
        "timestamp: 2026-01-29\n"
        "source: research\n"
        "tags:\n  - model\n"
        "status: complete\n"
        'entity: "[[model-lab]]"\n'
        "---\n"
        "Baseline model trained\n"
    )
    entity = vault["1 Projects/model-lab/model-lab.md"]
    assert "facts_active: 1\nfacts_superseded: 0\n" in entity
    assert "updated: 2026-01-29\n" in entity
    assert_quiet_second_pass(env)

    raw = (env.life / "projects/model-lab/items.json").read_bytes()
    edit_body(env, "1 Projects/model-lab/facts/ml-002.md", "Baseline model", "First baseline model")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert (env.life / "projects/model-lab/items.json").read_bytes() == raw.replace(
        b"Baseline model", b"First baseline model"
    )
    got = env.items("projects/model-lab")["facts"][1]
    assert got["status"] == "complete" and got["date"] == "2026-01-29" and "timestamp" not in got


# -- extra keys of every JSON type -------------------------------------------------------------------------
EXTRA = {
    "nested": {"level": {"deep": [1, "two", None]}, "flag": False},
    "items_list": ["alpha", 2, 3.5, True, None],
    "count": 42,
    "ratio": 1.0,
    "enabled": True,
    "missing": None,
    "big": 123456789012345678901234567890,
    "phone": "1234567890123456",
    "answer": "yes",
    "sci": "1e3",
    "loose_date": "2026-1-5",
    "clock": "10:30",
    "empty_list": [],
    "empty_obj": {},
    "negative": -7,
    "tiny": 2.5e-08,
}


def _extra_env(tmp_path: Path) -> tuple[Env, str, bytes]:
    env = make_env(tmp_path)
    env.entity("areas/people/rui", [fact("rui-001", "Rui plays five-a-side on Tuesdays", **EXTRA)], "# Rui\n")
    first_pass_clean(env)
    return env, f"{AREAS}/people/rui/facts/rui-001.md", (env.life / "areas/people/rui/items.json").read_bytes()


def test_extra_keys_render_with_types_obsidian_reads_back(tmp_path: Path) -> None:
    env, note, _ = _extra_env(tmp_path)
    text = env.note(note)
    for line in (
        'nested: {"level": {"deep": [1, "two", null]}, "flag": false}\n',
        "items_list:\n  - alpha\n  - 2\n  - 3.5\n  - true\n  - null\n",
        "count: 42\n",
        "ratio: 1.0\n",
        "enabled: true\n",
        "missing: null\n",
        "big: 123456789012345678901234567890\n",
        'phone: "1234567890123456"\n',
        'answer: "yes"\n',
        'sci: "1e3"\n',
        'clock: "10:30"\n',
        "negative: -7\n",
    ):
        assert line in text, (line, text)
    # Whatever the spelling, a YAML 1.2 reader (Obsidian) gets a string back for the loose date.
    from vaultsync.text.yamlcore import parse_properties, split_note

    props = parse_properties(split_note(text)[0] or "")
    for key, value in EXTRA.items():
        json_type_equal(props[key], value, key)
    assert_quiet_second_pass(env)


def test_extra_keys_keep_their_json_types_when_the_text_is_edited(tmp_path: Path) -> None:
    env, note, raw = _extra_env(tmp_path)

    edit_body(env, note, "on Tuesdays", "on Thursdays")
    report = env.sync()
    assert_exit(report, ExitCode.CLEAN)

    after = (env.life / "areas/people/rui/items.json").read_bytes()
    assert after == raw.replace(b"on Tuesdays", b"on Thursdays")
    expected = [fact("rui-001", "Rui plays five-a-side on Thursdays", **EXTRA)]
    json_type_equal(json.loads(after), expected)
    assert_quiet_second_pass(env)


def test_obsidian_rewriting_the_frontmatter_is_not_an_edit(tmp_path: Path) -> None:
    """Obsidian re-serialises a block it touches: keys reordered, quotes dropped where YAML 1.2 allows,
    1.0 written as 1, nested values in block style. Only the text edit may reach items.json."""
    env, note, raw = _extra_env(tmp_path)
    rewritten = (
        "---\n"
        "tiny: 2.5e-8\n"
        "negative: -7\n"
        "empty_obj: {}\n"
        "empty_list: []\n"
        "clock: 10:30\n"
        "loose_date: 2026-1-5\n"
        'sci: "1e3"\n'
        "answer: yes\n"
        'phone: "1234567890123456"\n'
        "big: 123456789012345678901234567890\n"
        "missing:\n"
        "enabled: true\n"
        "ratio: 1\n"
        "count: 42\n"
        "items_list:\n  - alpha\n  - 2\n  - 3.5\n  - true\n  -\n"
        "nested:\n  level:\n    deep:\n      - 1\n      - two\n      -\n  flag: false\n"
        "status: active\n"
        "source: conversation\n"
        "timestamp: 2026-01-15\n"
        "category: context\n"
        "id: rui-001\n"
        "entity: '[[rui|Rui]]'\n"
        "---\n"
        "Rui plays five-a-side on Thursdays\n"
    )
    (env.vault / note).write_text(rewritten, encoding="utf-8")

    assert_exit(env.sync(), ExitCode.CLEAN)

    after = (env.life / "areas/people/rui/items.json").read_bytes()
    assert after == raw.replace(b"on Tuesdays", b"on Thursdays")
    json_type_equal(json.loads(after), [fact("rui-001", "Rui plays five-a-side on Thursdays", **EXTRA)])


# -- ids reused across entities ----------------------------------------------------------------------------
def test_ids_reused_across_entities_link_by_path(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    for slug, name in (("ines", "Ines"), ("tomas", "Tomas")):
        env.entity(
            f"areas/people/{slug}",
            [
                fact("f001", f"{name} works at the bakery", status="superseded", supersededBy="f002"),
                fact("f002", f"{name} works at the library"),
            ],
            f"# {name}\n",
        )

    vault = managed(first_pass_clean(env))

    for slug, name in (("ines", "Ines"), ("tomas", "Tomas")):
        facts = f"{AREAS}/people/{slug}/facts"
        assert vault[f"{facts}/f001.md"] == (
            "---\n"
            "id: f001\n"
            "category: context\n"
            "timestamp: 2026-01-15\n"
            "source: conversation\n"
            "status: superseded\n"
            f'supersededBy: "[[{facts}/f002|f002]]"\n'
            f'entity: "[[{slug}|{name}]]"\n'
            "---\n"
            f"{name} works at the bakery\n"
        )
        assert f"\n---\n{name} works at the library\n" in vault[f"{facts}/f002.md"]
    assert_quiet_second_pass(env)

    # A person flipping one of them writes back the bare id, into that entity only.
    tomas_before = (env.life / "areas/people/tomas/items.json").read_bytes()
    edit_body(env, f"{AREAS}/people/ines/facts/f001.md", "the bakery", "the old bakery")
    assert_exit(env.sync(), ExitCode.CLEAN)
    ines = env.items("areas/people/ines")
    assert ines[0]["supersededBy"] == "f002" and ines[0]["fact"] == "Ines works at the old bakery"
    assert (env.life / "areas/people/tomas/items.json").read_bytes() == tomas_before


# -- Chinese text ------------------------------------------------------------------------------------------
def test_chinese_names_text_and_mentions(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.entity("areas/people/李伟", [fact("lw-001", "李伟负责量化回测框架")], "# 李伟 (Li Wei)\n\n量化研究员。\n")
    env.entity(
        "projects/回测平台",
        {
            "type": "project",
            "name": "回测平台",
            "items": [fact("bt-001", "由李伟在三月重写了信号引擎", category="架构")],
        },
    )
    env.daily("2026-03-26.md", "# 2026-03-26 日志\n\n## 重大发现\n- 子代理设置一直没用到\n")

    vault = managed(first_pass_clean(env))

    assert vault["Daily/2026-03-26.md"] == "# 2026-03-26 日志\n\n## 重大发现\n- 子代理设置一直没用到\n"
    assert vault[f"{AREAS}/people/李伟/facts/lw-001.md"] == (
        "---\n"
        "id: lw-001\n"
        "category: context\n"
        "timestamp: 2026-01-15\n"
        "source: conversation\n"
        "status: active\n"
        'entity: "[[李伟|李伟 (Li Wei)]]"\n'
        "---\n"
        "李伟负责量化回测框架\n"
    )
    assert vault["1 Projects/回测平台/facts/bt-001.md"] == (
        "---\n"
        "id: bt-001\n"
        "category: 架构\n"
        "timestamp: 2026-01-15\n"
        "source: conversation\n"
        "status: active\n"
        'entity: "[[回测平台]]"\n'
        "mentions:\n"
        '  - "[[李伟|李伟 (Li Wei)]]"\n'
        "---\n"
        "由李伟在三月重写了信号引擎\n"
    )
    assert 'related:\n  - "[[李伟|李伟 (Li Wei)]]"\n' in vault["1 Projects/回测平台/回测平台.md"]
    assert vault[f"{AREAS}/people/李伟/李伟.md"].split("---\n", 2)[2].startswith("# 李伟 (Li Wei)\n\n量化研究员。\n")
    assert_quiet_second_pass(env)

    raw = (env.life / "projects/回测平台/items.json").read_bytes()
    edit_body(env, "1 Projects/回测平台/facts/bt-001.md", "三月", "四月")
    assert_exit(env.sync(), ExitCode.CLEAN)
    assert (env.life / "projects/回测平台/items.json").read_bytes() == raw.replace("三月".encode(), "四月".encode())


# -- scale -------------------------------------------------------------------------------------------------
def test_large_items_json_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Durability is not what this test is about, and 10,000 fsyncs would dominate its run time.
    monkeypatch.setattr("os.fsync", lambda fd: None)
    env = make_env(tmp_path)
    n = 5000
    items = [
        fact(
            f"big-{i:05d}",
            f"Observation number {i} about the warehouse",
            category=f"c{i % 7}",
            timestamp=f"2026-01-{1 + i % 28:02d}",
        )
        for i in range(n)
    ]
    env.entity("resources/warehouse-log", items, "# Warehouse Log\n")

    start = time.monotonic()
    files = first_pass_clean(env)
    elapsed = time.monotonic() - start

    facts = {k for k in files if k.startswith("3 Resources/warehouse-log/facts/")}
    assert len(facts) == n
    assert (
        files["3 Resources/warehouse-log/facts/big-04999.md"]
        .decode()
        .endswith("---\nObservation number 4999 about the warehouse\n")
    )
    assert "facts_active: 5000\n" in files["3 Resources/warehouse-log/warehouse-log.md"].decode()
    assert elapsed < 20, f"first pass over {n} facts took {elapsed:.1f}s"
    assert_quiet_second_pass(env)


# -- files that are not facts ------------------------------------------------------------------------------
def _non_fact_env(tmp_path: Path) -> tuple[Env, Path, bytes, bytes, bytes]:
    env = make_env(tmp_path)
    index = b"# Life Index\n\nRoot of the PARA memory.\n\n- [[Projects]]\n- [[Areas]]\n"
    env.write(env.life / "index.md", index)
    yaml_facts = b'facts:\n  - id: f001\n    type: role\n    content: "Builds the product"\n    status: active\n'
    folder = env.entity("areas/people/lead-engineer", summary="# Lead Engineer\n\nFirst engineering hire.\n")
    env.write(folder / "items.yaml", yaml_facts)
    daily = "# 2026-08-07 - Lead Engineer notes\n\n## Status\n- Deployment live ✅\n".encode()
    env.write(folder / "memory" / "2026-08-07.md", daily)
    return env, folder, index, yaml_facts, daily


def test_index_md_items_yaml_and_entity_daily_notes_are_kept(tmp_path: Path) -> None:
    env, folder, index, yaml_facts, daily = _non_fact_env(tmp_path)
    before = env.memory()

    report = env.sync()

    assert env.memory() == before
    assert_exit(report, ExitCode.CLEAN)
    about_yaml = problems_for(report, folder / "items.yaml")
    assert len(about_yaml) == 1 and about_yaml[0].severity is Severity.NOTE
    assert "items.json" in about_yaml[0].message
    files = env.vault_files()
    assert files["3 Resources/agent/life/index.md"] == index
    assert files[f"{AREAS}/people/lead-engineer/memory/2026-08-07.md"] == daily
    assert not any(k.endswith("items.yaml") or "/lead-engineer/facts/" in k for k in files)
    assert "First engineering hire." in files[f"{AREAS}/people/lead-engineer/lead-engineer.md"].decode()
    assert (folder / "items.yaml").read_bytes() == yaml_facts

    # The mirrored daily note is the memory file: an edit in the vault goes back to the entity folder.
    edit_body(env, f"{AREAS}/people/lead-engineer/memory/2026-08-07.md", "Deployment live", "Deployment verified")
    report = env.sync()
    assert_exit(report, ExitCode.CLEAN)
    assert (folder / "memory" / "2026-08-07.md").read_bytes() == daily.replace(b"live", b"verified")
    assert (folder / "items.yaml").read_bytes() == yaml_facts
    assert not errors(report)


def test_items_yaml_is_reported_once(tmp_path: Path) -> None:
    env, folder, *_ = _non_fact_env(tmp_path)
    assert len(problems_for(env.sync(), folder / "items.yaml")) == 1
    assert problems_for(env.sync(), folder / "items.yaml") == []
