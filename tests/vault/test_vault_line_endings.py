"""A sync app converts every note of the vault to CRLF: the memory keeps its own line endings (summaries, daily
notes, MEMORY.md), no file ends in a bare CR, and a real edit arrives in the memory file's own style."""

from __future__ import annotations

import shutil

import pytest
from helpers.twoway import SARAH, SARAH_DIR, Env


def _to_crlf(env: Env) -> None:
    for path in env.vault.rglob("*.md"):
        if ".git" not in path.parts and ".vaultsync" not in path.parts:
            path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


@pytest.mark.parametrize(("edit", "no_base"), [(False, False), (True, False), (False, True)])
def test_a_vault_converted_to_crlf_leaves_the_memory_as_it_is(env: Env, edit: bool, no_base: bool) -> None:
    """``no_base``: the state folder deleted as well, so the pass adopts the converted vault as found."""
    summaries = {p: p.read_bytes() for p in env.life.rglob("summary.md")}
    files = {p: p.read_bytes() for p in env.workspace.rglob("*.md")}
    _to_crlf(env)
    daily = env.vault / "Daily/2026-11-30.md"
    if edit:
        daily.write_bytes(daily.read_bytes() + b"- a line typed on the laptop\r\n")
    if no_base:
        shutil.rmtree(env.cfg.state_dir)
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    if edit:
        note.write_bytes(note.read_bytes().replace(b"# Sarah Chen\r\n", b"# Sarah Chen\r\n\r\nMet her in Lisbon.\r\n"))

    report = env.sync()

    assert report.exit_code == 0, report.to_json()
    for path, before in summaries.items():
        after = path.read_bytes()
        assert not after.endswith(b"\r") and b"\r\n" not in after, path
        if not (edit and path.parent.name == "sarah-chen"):
            assert after == before, path
    for path, before in files.items():
        if edit and path.name == "2026-11-30.md":
            assert path.read_bytes() == before + b"- a line typed on the laptop\n"
        else:
            assert path.read_bytes() == before, path
    if edit:
        assert b"# Sarah Chen\n\nMet her in Lisbon.\n" in (env.life / SARAH / "summary.md").read_bytes()
    again = env.sync()
    assert again.files_written == 0 and again.exit_code == 0, again.to_json()


def test_text_below_the_view_of_a_crlf_note_is_kept(env: Env) -> None:
    _to_crlf(env)
    note = env.vault / SARAH_DIR / "sarah-chen.md"
    note.write_bytes(note.read_bytes() + b"\r\nA line typed below the table.\r\n")

    env.sync()

    summary = (env.life / SARAH / "summary.md").read_bytes()
    assert b"A line typed below the table.\n" in summary and b"\r" not in summary
