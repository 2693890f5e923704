"""An entity is named the same way on every surface: its folder under life/, the end of it, its slug or its vault
folder; a miss says which names come close and a name that fits several lists them (``memory/identity.py``).
The HTTP, MCP and ``log`` sides are in their own test files; here the resolver itself and the other faces."""

from __future__ import annotations

import pytest
from helpers.twoway import SARAH, SARAH_DIR, TODAY, Env
from hypothesis import given
from hypothesis import strategies as st

from vaultsync import cli
from vaultsync.app.review import regenerate
from vaultsync.core.review_note import BEGIN
from vaultsync.memory.identity import AmbiguousEntity, UnknownEntity, resolve_entity

KNOWN = ["areas/people/bo", "areas/people/sarah-chen", "projects/project-atlas", "areas/people/kim", "archives/kim"]
FOLDERS = {"2 Areas": "areas", "1 Projects": "projects", "4 Archives": "archives"}


@pytest.mark.parametrize(
    ("name", "rel"),
    [
        ("bo", "areas/people/bo"),
        ("people/bo", "areas/people/bo"),
        ("areas/people/bo", "areas/people/bo"),
        ("life/areas/people/bo", "areas/people/bo"),
        ("2 Areas/people/bo", "areas/people/bo"),
        ("2 Areas/people/bo/bo.md", "areas/people/bo"),
        ("/people/bo/", "areas/people/bo"),
        ("Sarah-Chen", "areas/people/sarah-chen"),
        ("project-atlas", "projects/project-atlas"),
        ("1 Projects/project-atlas", "projects/project-atlas"),
    ],
)
def test_every_form_of_a_name_finds_the_entity(name: str, rel: str) -> None:
    assert resolve_entity(name, KNOWN, FOLDERS) == rel


def test_a_miss_suggests_and_an_ambiguous_name_lists() -> None:
    with pytest.raises(UnknownEntity, match=r"did you mean areas/people/sarah-chen\?"):
        resolve_entity("sara-chen", KNOWN, FOLDERS)
    with pytest.raises(UnknownEntity, match=r"did you mean projects/project-atlas\?"):
        resolve_entity("atlas", KNOWN, FOLDERS)
    with pytest.raises(UnknownEntity) as nothing:
        resolve_entity("zzzzzz", KNOWN, FOLDERS)
    assert nothing.value.suggestions == [] and "did you mean" not in str(nothing.value)
    with pytest.raises(UnknownEntity):
        resolve_entity("areas/bo", KNOWN, FOLDERS)  # a name from its PARA folder on must be the whole folder
    with pytest.raises(AmbiguousEntity) as both:
        resolve_entity("kim", KNOWN, FOLDERS)
    assert both.value.candidates == ["archives/kim", "areas/people/kim"]
    assert "name one: archives/kim, areas/people/kim" in str(both.value)


@given(st.lists(st.from_regex(r"[a-z]{1,6}/[a-z]{1,6}(/[a-z]{1,6})?", fullmatch=True), min_size=1, unique=True))
def test_the_whole_folder_names_itself_and_any_end_of_it_names_it_or_lists_it(known: list[str]) -> None:
    for rel in known:
        assert resolve_entity(rel, known) == rel
        tail = rel.split("/", 1)[1]
        try:
            assert resolve_entity(tail, known) == rel or tail in known
        except AmbiguousEntity as exc:
            assert rel in exc.candidates and len(exc.candidates) > 1


def test_regenerate_takes_any_name_and_says_what_was_meant(env: Env) -> None:
    summary = env.life / SARAH / "summary.md"
    result = regenerate(env.cfg, ["sarah-chen"], TODAY)
    assert not result.problems and BEGIN in summary.read_text()
    assert BEGIN in (env.vault / SARAH_DIR / "sarah-chen.md").read_text()
    missed = regenerate(env.cfg, ["sarah-chn"], TODAY)
    assert [p.message for p in missed.problems] == [f"no entity 'sarah-chn'; did you mean {SARAH}?"]


def test_recall_entity_on_the_command_line(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["recall", "Acme", "--json", "--config", str(env.config_path)]
    assert cli.main([*args, "--entity", SARAH_DIR]) == 0
    by_folder = capsys.readouterr().out
    assert cli.main([*args, "--entity", "sarah-chen"]) == 0
    assert capsys.readouterr().out == by_folder and SARAH in by_folder
    assert cli.main([*args, "--entity", "sarah-chn"]) == 2
    assert f"did you mean {SARAH}?" in capsys.readouterr().err
