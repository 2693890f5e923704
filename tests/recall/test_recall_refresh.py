"""Keeping the recall index current: after any sequence of changes to the memory tree, the index a refresh keeps
holds exactly what one built from scratch holds, and an agent's everyday writes are read without listing the
tree. Real files in a copy of vault-example's memory; nothing of vaultsync is mocked (the listing is only
watched, to count it)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultsync.config import Config, Layout
from vaultsync.state.files import StateFiles
from vaultsync.state.recall import DOC_FIELDS
from vaultsync.write_path import recall_docs
from vaultsync.write_path.recall_refresh import refresh

EXAMPLE = REPO / "vault-example"
ATLAS = "projects/project-atlas"
READING = "resources/reading-list"  # a summary.md and no items.json


class Tree:
    """A copy of the example memory whose every write gets an old, distinct mtime: the stats a refresh trusts."""

    def __init__(self, root: Path) -> None:
        shutil.copytree(EXAMPLE, root / "mem")
        self.cfg = Config(workspace=root / "mem/workspace", life=root / "mem/life", vault=root / "vault")
        self.root = root
        self.clock = time.time() - 86_400
        for path in (root / "mem").rglob("*"):
            self.age(path)

    def age(self, path: Path) -> None:
        self.clock += 1
        if path.is_file():
            os.utime(path, (self.clock, self.clock))

    def write(self, rel: str, text: str) -> None:
        path = self.root / "mem" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.age(path)

    def link(self, rel: str, target: Path) -> None:
        path = self.root / "mem" / rel
        path.symlink_to(target)
        self.clock += 1
        os.utime(path, (self.clock, self.clock), follow_symlinks=False)

    def link_or_unlink(self, rel: str, n: int) -> None:
        """A link to MEMORY.md where there is none; where there is one, a plain file in its place."""
        if (self.root / "mem" / rel).is_symlink():
            self.remove(rel)
            self.write(rel, f"- made a file {n}\n")
        elif not (self.root / "mem" / rel).exists():
            self.link(rel, self.cfg.workspace / "MEMORY.md")

    def remove(self, rel: str) -> None:
        path = self.root / "mem" / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

    def facts(self, rel: str, *texts: str) -> None:
        facts = [{"id": f"{rel.rsplit('/', 1)[-1]}-{i}", "fact": t, "status": "active"} for i, t in enumerate(texts)]
        self.write(f"life/{rel}/items.json", json.dumps(facts))


def contents(cfg: Config) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """What an index holds, in an order that does not depend on when each piece was added."""
    db = sqlite3.connect(StateFiles(cfg.state_dir).recall)
    try:
        docs = sorted(db.execute(f"SELECT {', '.join(DOC_FIELDS)} FROM docs"), key=repr)
        names = sorted(db.execute("SELECT word, target, source FROM names"))
    finally:
        db.close()
    return docs, names


def from_scratch(tree: Tree) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    fresh = Config(workspace=tree.cfg.workspace, life=tree.cfg.life, vault=tree.root / "scratch")
    StateFiles(fresh.state_dir).recall.unlink(missing_ok=True)
    refresh(fresh).close()
    return contents(fresh)


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The listings of the tree refreshes make (each still runs), named by the index's vault folder."""
    made: list[str] = []
    real = recall_docs.tree_files

    def counted(cfg: Config) -> recall_docs.TreeFiles:
        made.append(cfg.vault.name)
        return real(cfg)

    monkeypatch.setattr(recall_docs, "tree_files", counted)
    return made


def test_everyday_writes_are_read_without_listing_the_tree(tmp_path: Path, listings: list[str]) -> None:
    tree = Tree(tmp_path)
    refresh(tree.cfg).close()
    assert listings == ["vault"]

    tree.facts(ATLAS, "Atlas moved to a titanium chassis")  # an entity's facts rewritten
    tree.write("workspace/memory/2026-12-02.md", "# 2026-12-02\n\n- Booked the kiln for Saturday\n")  # a new day
    tree.facts(READING, "Finish the book about lighthouses")  # the second file of a known entity
    tree.remove("workspace/memory/2026-11-27.md")  # a day deleted
    tree.remove(f"life/{ATLAS}/summary.md")  # one of an entity's two files deleted
    refresh(tree.cfg).close()

    assert listings == ["vault"]
    bodies = {row[DOC_FIELDS.index("body")] for row in contents(tree.cfg)[0]}
    assert {"Atlas moved to a titanium chassis", "Finish the book about lighthouses"} <= bodies
    assert any("kiln" in str(body) for body in bodies)
    assert contents(tree.cfg) == from_scratch(tree)


def test_what_only_a_listing_can_place_is_listed_once(tmp_path: Path, listings: list[str]) -> None:
    tree = Tree(tmp_path)
    refresh(tree.cfg).close()
    tree.facts("areas/people/nora-lind", "Nora keeps bees")  # a new entity folder
    tree.write("life/projects/project-atlas/photo.png", "not memory")  # a file no scan reads
    tree.write("workspace/memory/notes.txt", "not markdown")
    refresh(tree.cfg).close()
    assert listings.count("vault") == 2
    assert contents(tree.cfg) == from_scratch(tree)

    tree.write("life/projects/project-atlas/photo.png", "still not memory, changed")
    tree.write("workspace/memory/2026-12-03.md", "- Nora's bees swarmed\n")
    refresh(tree.cfg).close()
    assert listings.count("vault") == 2, "a file known to be no memory made the refresh list the tree again"
    assert contents(tree.cfg) == from_scratch(tree)


def test_a_changed_layout_lists_the_tree_again(tmp_path: Path, listings: list[str]) -> None:
    """Which life/ folders a scan leaves to the workspace's files is config, not a file's stat."""
    tree = Tree(tmp_path)
    tree.write("life/resources/helper/summary.md", "# Helper\n\nThe helper's own notes\n")
    refresh(tree.cfg).close()
    assert "life/resources/helper/summary.md" in {row[0] for row in contents(tree.cfg)[0]}

    moved = Config(tree.cfg.workspace, tree.cfg.life, tree.cfg.vault, layout=Layout(agent="helper"))
    refresh(moved).close()
    assert listings == ["vault", "vault"]
    assert "life/resources/helper/summary.md" not in {row[0] for row in contents(moved)[0]}


def test_a_file_that_becomes_memory_is_read(tmp_path: Path) -> None:
    """A link in the memory folder is no memory (a scan does not follow it); made a plain file, it is."""
    tree = Tree(tmp_path)
    tree.write("outside.md", "- the kiln cracked\n")
    tree.link("workspace/memory/2026-12-04.md", tree.root / "mem/outside.md")
    refresh(tree.cfg).close()
    assert "workspace/memory/2026-12-04.md" not in {row[0] for row in contents(tree.cfg)[0]}

    tree.remove("workspace/memory/2026-12-04.md")
    tree.write("workspace/memory/2026-12-04.md", "- the kiln cracked\n")
    refresh(tree.cfg).close()
    assert "workspace/memory/2026-12-04.md" in {row[0] for row in contents(tree.cfg)[0]}
    assert contents(tree.cfg) == from_scratch(tree)


CHANGES: dict[str, Callable[[Tree, int], None]] = {
    "edit facts": lambda t, n: t.facts(ATLAS, f"Atlas revision {n}", "Pilot units ship in spring"),
    "facts of a summary-only entity": lambda t, n: t.facts(READING, f"Book number {n}"),
    "drop a summary": lambda t, n: t.remove(f"life/{ATLAS}/summary.md"),
    "write a summary": lambda t, n: t.write(f"life/{ATLAS}/summary.md", f"# Atlas\n\nRevision {n} of the plan\n"),
    "new day": lambda t, n: t.write(f"workspace/memory/2027-01-{n % 28 + 1:02d}.md", f"- **Sam**: day {n}?\n- ok\n"),
    "not a real date": lambda t, n: t.write("workspace/memory/2026-02-30.md", f"- skipped by every scan {n}\n"),
    "memory note": lambda t, n: t.write("workspace/memory/tools-log.md", f"# Tools\n\n- used grep {n}\n"),
    "drop a day": lambda t, n: t.remove("workspace/memory/2026-11-28.md"),
    "new entity": lambda t, n: t.facts(f"areas/people/person-{n % 3}", f"Person {n} likes tea"),
    "drop an entity": lambda t, n: t.remove("life/areas/people/li-wei"),
    "archive an entity": lambda t, n: (
        shutil.move(str(t.root / "mem/life/areas/companies"), str(t.root / f"mem/life/archives/companies-{n}"))
        if (t.root / "mem/life/areas/companies").exists()
        else None
    ),
    "a day linked, then made a file": lambda t, n: t.link_or_unlink("workspace/memory/2027-02-01.md", n),
    "no memory": lambda t, n: t.write(f"life/projects/project-atlas/img-{n % 2}.png", f"bytes {n}"),
    "archive a month": lambda t, n: t.write(f"workspace/memory/archive/2026-0{n % 9 + 1}.md", f"# Old {n}\n\n- x\n"),
    "life note": lambda t, n: t.write("life/index.md", f"# Index\n\nRevision {n}\n"),
    "tacit": lambda t, n: t.write("workspace/MEMORY.md", f"## Tools [P0]\n\n- revision {n}\n"),
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(sorted(CHANGES)), min_size=1, max_size=3), min_size=1, max_size=4))
def test_the_kept_index_equals_one_built_from_scratch(tmp_path_factory: pytest.TempPathFactory, rounds: list) -> None:
    tree = Tree(tmp_path_factory.mktemp("refresh"))
    refresh(tree.cfg).close()
    for n, changes in enumerate(rounds):
        for change in changes:
            CHANGES[change](tree, n)
        refresh(tree.cfg).close()
        assert contents(tree.cfg) == from_scratch(tree), (n, changes)
