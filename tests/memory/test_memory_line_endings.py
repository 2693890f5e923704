"""The agent's own line endings and byte-order marks stay as they are: a BOM and CRLF in items.json and in a
summary survive the first pass byte for byte, and an edit made in the vault (where Obsidian may save the note with
LF) comes back in the memory file's own style. The vault side of the same promise is in
``tests/vault/test_vault_line_endings.py``."""

from __future__ import annotations

from pathlib import Path

from helpers.inputs import assert_exit, assert_quiet_second_pass, dumps, edit_body, fact, first_pass_clean, make_env

from vaultsync.model import ExitCode

AREAS = "2 Areas"


def test_bom_and_crlf_files_stay_byte_identical_and_edits_keep_them(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = dumps(
        [fact("dana-001", "Dana runs the Thursday book club"), fact("dana-002", "Dana prefers email")],
        bom=True,
        crlf=True,
    )
    summary = "\ufeff# Dana Reyes\r\n\r\nNeighbour and book club host.\r\n".encode()
    folder = env.entity("areas/people/dana", items, summary)

    files = first_pass_clean(env)
    assert (folder / "items.json").read_bytes() == items
    assert (folder / "summary.md").read_bytes() == summary
    assert "Dana runs the Thursday book club\n" in files[f"{AREAS}/people/dana/facts/dana-001.md"].decode()
    assert "Neighbour and book club host." in files[f"{AREAS}/people/dana/dana.md"].decode()
    assert "\ufeff" not in files[f"{AREAS}/people/dana/dana.md"].decode()
    assert_quiet_second_pass(env)

    edit_body(env, f"{AREAS}/people/dana/facts/dana-001.md", "Thursday", "Friday")
    edit_body(env, f"{AREAS}/people/dana/dana.md", "book club host", "book club founder")
    assert_exit(env.sync(), ExitCode.CLEAN)

    assert (folder / "items.json").read_bytes() == items.replace(b"Thursday", b"Friday")
    assert (folder / "summary.md").read_bytes() == summary.replace(b"book club host", b"book club founder")
    assert_quiet_second_pass(env)


def test_crlf_summary_with_frontmatter_keeps_crlf_when_edited(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    summary = "\ufeff---\r\naliases:\r\n  - Dee\r\nsince: 2019\r\n---\r\n# Dana Reyes\r\n\r\nLikes tea.\r\n".encode()
    folder = env.entity("areas/people/dana", [fact("dana-001", "Dana runs the book club")], summary)
    first_pass_clean(env)
    assert (folder / "summary.md").read_bytes() == summary

    edit_body(env, f"{AREAS}/people/dana/dana.md", "Likes tea", "Likes green tea")
    assert_exit(env.sync(), ExitCode.CLEAN)

    assert (folder / "summary.md").read_bytes() == summary.replace(b"Likes tea", b"Likes green tea")


def test_crlf_summary_keeps_crlf_when_obsidian_saves_the_note_with_lf(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    summary = "\ufeff# Dana Reyes\r\n\r\nNeighbour and book club host.\r\n".encode()
    folder = env.entity("areas/people/dana", [fact("dana-001", "Dana runs the book club")], summary)
    first_pass_clean(env)

    note = env.vault / f"{AREAS}/people/dana/dana.md"
    note.write_bytes(note.read_bytes().replace(b"\r\n", b"\n").replace(b"book club host", b"book club founder"))
    assert_exit(env.sync(), ExitCode.CLEAN)

    assert (folder / "summary.md").read_bytes() == summary.replace(b"book club host", b"book club founder")
