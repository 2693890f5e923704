"""A fact note's ``daily`` property links only to a daily note that exists; any other day is plain text, so a
click never makes an empty daily note that the next pass would carry into the agent's memory."""

from __future__ import annotations

from pathlib import Path

from helpers.twoway import Env, props_of

from vaultsync.vault.links import link_target


def dailies(env: Env) -> dict[Path, str]:
    """Every fact note's ``daily`` value."""
    found = {}
    for note in env.vault.rglob("facts/*.md"):
        value = props_of(note).get("daily")
        if value is not None:
            found[note] = str(value)
    return found


def test_first_import_links_only_existing_daily_notes_and_a_later_pass_links_a_new_one(env: Env) -> None:
    shown = dailies(env)
    links = {n: v for n, v in shown.items() if v.startswith("[[")}
    plain = {n: v for n, v in shown.items() if not v.startswith("[[")}
    assert links and plain
    for note, value in links.items():
        assert (env.vault / f"Daily/{link_target(value)}.md").is_file(), (note, value)
    for note, value in plain.items():
        assert len(value) == 10 and not (env.vault / f"Daily/{value}.md").exists(), (note, value)
    assert env.sync().exit_code == 0 and dailies(env) == shown  # settled: nothing to rewrite

    note, day = next(iter(sorted(plain.items())))
    (env.workspace / f"memory/{day}.md").write_text(f"# {day}\n\n- remembered later\n", encoding="utf-8")
    assert env.sync().exit_code == 0
    assert (env.vault / f"Daily/{day}.md").is_file()
    assert props_of(note)["daily"] == f"[[Daily/{day}|{day}]]"
    assert all(v != day for v in dailies(env).values())
