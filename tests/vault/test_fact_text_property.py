"""``[vault] fact_text_property``: fact notes carry their text as the property ``text`` too, so Bases views can
show it. ``init`` turns it on for a new vault and only offers it (one line) for an existing one; off (the
key's default) the text is in the body only, once; on, an edit in either place reaches items.json, an edited
body wins, and the other place follows without churn."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env, body_of, props_of, set_body, set_prop

from vaultsync import cli
from vaultsync import config as configmod
from vaultsync.model import ExitCode

FACT = "sarah-chen-004"


def _turn_on(env: Env) -> None:
    cfg = replace(env.cfg, layout=replace(env.cfg.layout, fact_text_property=True))
    env.config_path.write_text(configmod.dumps(cfg), encoding="utf-8")
    env.cfg = configmod.load(env.config_path)
    assert env.cfg.layout.fact_text_property


def _quiet(env: Env) -> None:
    head = env.head()
    again = env.sync()
    assert again.exit_code == ExitCode.CLEAN, again.to_json()
    assert again.files_written == 0 and again.commits == [] and env.head() == head, again.actions


def _turned_on(env: Env) -> Path:
    _turn_on(env)
    report = env.sync()
    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    note = env.fact_note(SARAH_DIR, FACT)
    text = env.fact(SARAH, FACT)["fact"]
    assert props_of(note)["text"] == text.rstrip("\n") and body_of(note) == text + "\n"
    assert "      - text\n" in env.note(f"{SARAH_DIR}/sarah-chen.md").read_text(encoding="utf-8")
    _quiet(env)
    return note


def test_init_shows_the_text_in_a_new_vault_and_offers_it_to_an_existing_one(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roots = ["--workspace", str(env.workspace), "--life", str(env.life)]
    new = tmp_path / "new"
    assert cli.main(["init", *roots, "--vault", str(new / "vault"), "--config", str(new / "c.toml")]) == 0
    assert "note:" not in capsys.readouterr().out
    cfg = configmod.load(new / "c.toml")
    assert cfg.layout.fact_text_property
    assert "      - file.name\n      - text\n" in (new / "vault/Memory.base").read_text(encoding="utf-8")
    assert replace(env, cfg=cfg).sync().exit_code == ExitCode.CLEAN
    note = new / "vault" / SARAH_DIR / "facts" / f"{FACT}.md"
    assert props_of(note)["text"] == env.fact(SARAH, FACT)["fact"]
    assert cli.main(["init", *roots, "--vault", str(new / "vault"), "--config", str(new / "c.toml")]) == 0
    assert "note:" not in capsys.readouterr().out  # the same config again: nothing to offer

    head, notes = env.head(), sorted(p.read_bytes() for p in env.vault.rglob("*.md"))
    existing = ["init", *roots, "--vault", str(env.vault), "--config", str(tmp_path / "old.toml")]
    assert cli.main(existing) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert len(said) == 1 and "fact_text_property = true" in said[0] and "[vault]" in said[0]
    assert not configmod.load(tmp_path / "old.toml").layout.fact_text_property
    assert sorted(p.read_bytes() for p in env.vault.rglob("*.md")) == notes and env.head() == head


def test_off_by_default_the_text_is_in_the_body_only(env: Env) -> None:
    note = env.fact_note(SARAH_DIR, FACT)
    assert "text" not in props_of(note)
    assert note.read_text(encoding="utf-8").count(env.fact(SARAH, FACT)["fact"]) == 1


def test_a_property_only_edit_reaches_items_json_and_the_body_follows(env: Env) -> None:
    note = _turned_on(env)
    set_prop(note, "text", "Sarah Chen now leads the Atlas pilot review")

    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, FACT)["fact"] == "Sarah Chen now leads the Atlas pilot review"
    assert "text" not in env.fact(SARAH, FACT), "the property is the note's, never a key of items.json"
    assert body_of(note) == "Sarah Chen now leads the Atlas pilot review\n"
    assert props_of(note)["text"] == "Sarah Chen now leads the Atlas pilot review"
    _quiet(env)


def test_a_body_edit_wins_and_the_property_follows(env: Env) -> None:
    note = _turned_on(env)
    set_body(note, "Sarah Chen moved the check-in to Wednesdays\n")

    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, FACT)["fact"] == "Sarah Chen moved the check-in to Wednesdays"
    assert props_of(note)["text"] == "Sarah Chen moved the check-in to Wednesdays"
    _quiet(env)


def test_both_places_edited_differently_the_body_wins(env: Env) -> None:
    note = _turned_on(env)
    set_body(note, "the body's words\n")
    set_prop(note, "text", "the property's words")

    report = env.sync()

    assert report.exit_code == ExitCode.CLEAN, report.to_json()
    assert env.fact(SARAH, FACT)["fact"] == "the body's words"
    assert props_of(note)["text"] == "the body's words"
    _quiet(env)


def test_an_agents_own_text_key_is_an_ordinary_property(env: Env) -> None:
    _turn_on(env)

    def add_key(facts: list[dict[str, object]]) -> None:
        next(f for f in facts if f.get("id") == FACT)["text"] = "the agent's own"

    env.agent_edit(SARAH, add_key)
    env.sync()
    note = env.fact_note(SARAH_DIR, FACT)
    assert props_of(note)["text"] == "the agent's own"
    set_body(note, "a new text\n")
    env.sync()
    assert env.fact(SARAH, FACT)["fact"] == "a new text" and env.fact(SARAH, FACT)["text"] == "the agent's own"
    _quiet(env)
