"""A settled setup and the edits the scoped and batched comparisons make on it.

``settled`` is a copy of vault-example synced, every file aged (so the snapshot trusts stats) and synced again
until a pass is quick. The edits are named, so a hypothesis round can draw them by name, and a run of them ends
as a full pass would (``tests/engine/test_scoped.py`` and ``test_batched_pass.py`` compare both).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from helpers.twoway import (
    ACME_DIR,
    ATLAS,
    ATLAS_DIR,
    LIWEI,
    LIWEI_DIR,
    MIGUEL,
    SARAH,
    SARAH_DIR,
    Env,
    clone,
    replace_text,
    set_prop,
)
from vaultsync.model import Report


def age_everything(env: Env) -> None:
    """Set every file's mtime an hour back, as for a memory written long before the pass (not racy)."""
    old = time.time() - 3600
    for root in (env.workspace, env.life, env.vault):
        for path in root.rglob("*"):
            if ".git" not in path.parts and ".vaultsync" not in path.parts:
                os.utime(path, (old, old), follow_symlinks=False)


Edit = Callable[[Env], None]


def settled(template: Path, root: Path) -> Env:
    """A copy of ``template`` (conftest's ``synced_template``: vault-example after one clean first pass) at
    ``root``, every file aged, synced until a pass is quick. The copy's first pass is a full one: its snapshot
    belongs to the template's configuration."""
    env = clone(template, root)
    age_everything(env)
    env.sync()
    assert env.sync().quick, "the setup did not settle"
    return env


# -- edits ----------------------------------------------------------------------------------------------------
def person_edits_fact(env: Env) -> None:
    replace_text(env.fact_note(SARAH_DIR, "sarah-chen-001"), "manager at Acme Corp", "director at Acme Corp")


def person_supersedes_fact(env: Env) -> None:
    set_prop(env.fact_note(LIWEI_DIR, "li-wei-001"), "status", "superseded")


def person_adds_fact_note(env: Env) -> None:
    (env.vault / SARAH_DIR / "facts" / "new idea.md").write_text("Sarah Chen plays the cello\n", encoding="utf-8")


def person_deletes_fact_note(env: Env) -> None:
    env.fact_note(SARAH_DIR, "sarah-chen-003").unlink()


def person_edits_entity_body(env: Env) -> None:
    replace_text(env.note(f"{SARAH_DIR}/sarah-chen.md"), "She is organised and direct", "She is organised and kind")


def person_adds_alias(env: Env) -> None:
    replace_text(env.note(f"{ACME_DIR}/acme-corp.md"), "  - Acme Corp\n", "  - Acme Corp\n  - ACME Inc\n")


def person_writes_daily_note(env: Env) -> None:
    (env.vault / "Daily" / "2026-12-03.md").write_text("# 2026-12-03\n\n- called the bank\n", encoding="utf-8")


def person_makes_entity(env: Env) -> None:
    folder = env.vault / "2 Areas/people/nora-lind"
    folder.mkdir()
    (folder / "nora-lind.md").write_text("# Nora Lind\n\nDesigns enclosures.\n", encoding="utf-8")


def agent_makes_entity(env: Env) -> None:
    folder = env.life / "areas/people/nora-lind"
    folder.mkdir()
    (folder / "summary.md").write_text("# Nora Lind\n\nDesigns enclosures.\n", encoding="utf-8")
    fact = {"id": "nora-lind-001", "fact": "Nora Lind works from Oslo", "category": "context", "status": "active"}
    (folder / "items.json").write_text(json.dumps([fact], indent=2) + "\n", encoding="utf-8")


def person_makes_entity_from_a_fact(env: Env) -> None:
    facts = env.vault / "2 Areas/people/ida-berg/facts"
    facts.mkdir(parents=True)
    (facts / "first.md").write_text("Ida Berg tests the enclosures\n", encoding="utf-8")


def agent_makes_entity_of_a_new_kind(env: Env) -> None:
    folder = env.life / "areas/pets/rex"
    folder.mkdir(parents=True)
    (folder / "summary.md").write_text("# Rex\n\nThe office dog.\n", encoding="utf-8")


def person_moves_entity(env: Env) -> None:
    (env.vault / "4 Archives/people").mkdir(parents=True)
    shutil.move(env.vault / LIWEI_DIR, env.vault / "4 Archives/people/li-wei")


def person_archives_project(env: Env) -> None:
    shutil.move(env.vault / ATLAS_DIR, env.vault / "4 Archives/project-atlas")  # beside 4 Archives/old-apartment


def agent_adds_fact(text: str, fact_id: str = "sarah-chen-099") -> Edit:
    def edit(env: Env) -> None:
        record = {"id": fact_id, "fact": text, "category": "context", "timestamp": "2026-12-01"}
        env.agent_edit(SARAH, lambda facts: facts.append({**record, "source": "chat", "status": "active"}))

    return edit


def agent_appends_daily(env: Env) -> None:
    with (env.workspace / "memory" / "2026-12-01.md").open("a", encoding="utf-8") as f:
        f.write("- 16:00 reviewed the enclosure drawings\n")


def agent_starts_daily(env: Env) -> None:
    (env.workspace / "memory" / "2026-12-02.md").write_text("# 2026-12-02\n\n- 08:00 started\n", encoding="utf-8")


def agent_edits_memory_md(env: Env) -> None:
    with (env.workspace / "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write("\n## Tea [P2] [2026-12-01]\n- Prefers green tea in the afternoon\n")


def agent_renames_entity(env: Env) -> None:
    summary = env.life / MIGUEL / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8").replace("# Miguel Ortiz", "# Miguel A. Ortiz", 1))


def agent_archives_project(env: Env) -> None:
    shutil.move(env.life / ATLAS, env.life / "archives/project-atlas")


def agent_deletes_entity(env: Env) -> None:
    shutil.rmtree(env.life / LIWEI)


def person_deletes_entity(env: Env) -> None:
    shutil.rmtree(env.vault / LIWEI_DIR)


def agent_edits_summary(env: Env) -> None:
    summary = env.life / SARAH / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8") + "\nShe moved to the Oslo office.\n", encoding="utf-8")


def both_edit_one_fact(env: Env) -> None:
    replace_text(env.fact_note(SARAH_DIR, "sarah-chen-001"), "manager at Acme Corp", "director at Acme Corp")
    env.agent_edit(SARAH, lambda facts: facts[0].update(fact="Sarah Chen is a hardware lead at Acme Corp"))


BREAK = b"\n}"  # after the closing bracket: items.json no longer parses


def agent_breaks_items(env: Env) -> None:
    items = env.items_path(MIGUEL)
    data = items.read_bytes()
    if data.endswith(BREAK):
        raise ValueError("broken already")
    items.write_bytes(data + BREAK)


def agent_mends_items(env: Env) -> None:
    items = env.items_path(MIGUEL)
    data = items.read_bytes()
    if not data.endswith(BREAK):
        raise ValueError("not broken")
    items.write_bytes(data.removesuffix(BREAK))


def person_empties_fact_note(env: Env) -> None:
    note = env.fact_note(LIWEI_DIR, "li-wei-002")
    if not note.exists():
        raise ValueError("no such note")
    note.write_bytes(b"")


def nothing_synced(env: Env) -> None:
    (env.vault / "scratch.md").write_text("not in a synced place\n", encoding="utf-8")


SCOPED: dict[str, Edit] = {
    "person edits a fact": person_edits_fact,
    "person supersedes a fact": person_supersedes_fact,
    "person adds a fact note": person_adds_fact_note,
    "person deletes a fact note": person_deletes_fact_note,
    "person edits an entity note": person_edits_entity_body,
    "person writes a daily note": person_writes_daily_note,
    "agent adds a fact": agent_adds_fact("Sarah Chen booked the lab for Friday"),
    "agent adds a fact naming others": agent_adds_fact("Sarah Chen and Miguel Ortiz met Li Wei at Acme Corp"),
    "agent appends to today's note": agent_appends_daily,
    "agent starts a daily note": agent_starts_daily,
    "agent edits MEMORY.md": agent_edits_memory_md,
    "agent edits a summary": agent_edits_summary,
    "both edit one fact": both_edit_one_fact,
    # A name created or changed: the entities whose facts name it are read as well (found in the base).
    "person adds an alias": person_adds_alias,
    "person makes an entity": person_makes_entity,
    "agent makes an entity": agent_makes_entity,
    "person makes an entity from a fact note": person_makes_entity_from_a_fact,
    "agent renames an entity": agent_renames_entity,
    "agent deletes an entity": agent_deletes_entity,
    "person deletes an entity": person_deletes_entity,
    "person archives a project": person_archives_project,
    "agent archives a project": agent_archives_project,
}
WIDENED: dict[str, Edit] = {
    "agent makes an entity of a new kind": agent_makes_entity_of_a_new_kind,  # a folder no entity sits beside
    "person moves an entity to a new kind": person_moves_entity,  # likewise
    # A fact note named like another entity's note makes [[miguel-ortiz]] ambiguous for every fact linking it.
    "agent adds a fact named like a note": agent_adds_fact("Sarah Chen shares a desk", fact_id="miguel-ortiz"),
}


# -- comparing with a full pass ---------------------------------------------------------------------------------
def commits(env: Env, since: str) -> list[tuple[str, str, set[str]]]:
    return [env.commit_info(rev) for rev in env.commits_since(since)]


def shown(report: Report, env: Env) -> dict[str, Any]:
    data = report.to_json()
    for key in ("commits", "quick", "scoped"):
        data.pop(key)
    return json.loads(json.dumps(data).replace(str(env.root), "ROOT"))


# Faults in one file's content, which stand until that file changes, whatever changes elsewhere.
STANDING: dict[str, Edit] = {
    "agent breaks an items.json": agent_breaks_items,
    "agent mends that items.json": agent_mends_items,
    "person empties a fact note": person_empties_fact_note,
    "agent repeats a fact id": agent_adds_fact("Sarah Chen moved desks", fact_id="SARAH-CHEN-001"),
}


EDITS = {**SCOPED, **WIDENED, **STANDING}


def rounds_settings(variable: str, default: int) -> settings:
    """Hypothesis settings for rounds of edits: ``default`` fixed examples in CI, or as many fresh ones as the
    environment ``variable`` asks for."""
    return settings(
        max_examples=int(os.environ.get(variable, str(default))),
        deadline=None,
        derandomize=variable not in os.environ,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


def apply_edits(env: Env, names: list[str]) -> None:
    """One round's edits; those that no longer apply are skipped."""
    for name in names:
        try:
            EDITS[name](env)
        except (OSError, AssertionError, ValueError):
            continue  # already done in an earlier round (a folder moved, a note deleted)
