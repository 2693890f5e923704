"""The record of who made the changes still waiting for a commit (``.vaultsync/actors.json``): what is claimed
is read back, what is settled is gone, and a damaged record reads as empty rather than stopping a pass."""

from __future__ import annotations

from pathlib import Path

from vaultsync.model import PERSON, client
from vaultsync.state import actors
from vaultsync.state.files import StateFiles

SARAH_FACT = "fact:areas/people/sarah#sarah-007"
DAILY = "file:workspace/memory/2026-12-01.md"


def test_claimed_units_are_read_back_with_their_subject_and_settled_ones_are_gone(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    bot = client("openclaw", "main", "agent:main:telegram:direct:42")
    actors.claim(files, {SARAH_FACT}, bot)
    actors.claim(files, {DAILY}, PERSON, "review: a fix")

    assert actors.pending(files) == {SARAH_FACT: bot, DAILY: PERSON}
    assert actors.subjects(files) == {PERSON: "review: a fix"}

    actors.settle(files, [DAILY])
    assert actors.pending(files) == {SARAH_FACT: bot} and actors.subjects(files) == {}
    actors.settle(files, [SARAH_FACT])
    assert not files.actors.exists()


def test_a_damaged_record_reads_as_empty(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    for text in ("{not json", "[1, 2]", '{"x": {"kind": "robot"}}', '{"x": {"kind": "client", "client": 3}}'):
        files.actors.write_text(text, encoding="utf-8")
        assert actors.pending(files) == {} and actors.subjects(files) == {}
    actors.claim(files, {DAILY}, PERSON)
    assert actors.pending(files) == {DAILY: PERSON}
