"""What a pass never showed in the vault is never deleted from the memory through the vault (docs/safety.md,
section 5): facts skipped for a bad id or for not being objects, and bad ``items.json`` files at the first
import."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.inputs import assert_exit, dumps, fact, make_env

from vaultsync.model import ExitCode

REL = "areas/people/ana"
UNSHOWN = [fact("a/b", "Ana's id holds a slash"), "a sentence where a fact belongs", fact("a\x01", "control")]


def test_deleting_an_entity_folder_keeps_the_facts_never_shown(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    items = [fact("a1", "Ana plays chess"), UNSHOWN[0], fact("a2", "Ana lives in Porto"), *UNSHOWN[1:]]
    folder = env.entity(REL, items, "# Ana\n")
    env.entity("areas/people/bo", [fact("b1", "Bo bakes bread")], "# Bo\n")
    assert_exit(env.sync(), ExitCode.SKIPPED_INPUT)
    assert sorted(p.name for p in (env.vault / "2 Areas/people/ana/facts").iterdir()) == ["a1.md", "a2.md"]

    shutil.rmtree(env.vault / "2 Areas/people/ana")
    report = env.sync()

    assert_exit(report, ExitCode.SKIPPED_INPUT)
    assert json.loads((folder / "items.json").read_text(encoding="utf-8")) == UNSHOWN
    assert not (folder / "summary.md").exists()
    lines = [p.line() for p in report.problems]
    assert any("3 fact(s) never shown in the vault" in line and "items.json" in line for line in lines), lines
    whats = [c.what for c in report.changes if c.scope == "people/ana"]
    assert sorted(whats) == ["-fact", "-fact", "entity deleted"], whats
    assert not (env.vault / "2 Areas/people/ana").exists()

    again = env.sync()
    assert again.exit_code is ExitCode.SKIPPED_INPUT
    assert json.loads((folder / "items.json").read_text(encoding="utf-8")) == UNSHOWN
    assert not (env.vault / "2 Areas/people/ana").exists()


def test_the_first_import_leaves_an_items_file_of_invalid_facts_in_place(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    folder = env.entity(REL, UNSHOWN)
    env.entity("areas/people/bo", [fact("b1", "Bo bakes bread")], "# Bo\n")
    raw = dumps(UNSHOWN)

    for _ in range(2):
        report = env.sync()
        assert_exit(report, ExitCode.SKIPPED_INPUT)
        assert (folder / "items.json").read_bytes() == raw
        assert not list((env.vault / ".vaultsync").rglob("trash/**/items.json"))
        assert any("items.json" in p.path for p in report.problems)
