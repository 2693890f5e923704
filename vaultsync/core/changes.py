"""Saying what changed, on which side, for which entity: the words of commit messages and the report."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from vaultsync.core.decide import Outcome
from vaultsync.core.units import World
from vaultsync.keys import ENTITY, FACT, entity_key, facts_of, is_file, note_of, rel_of, scope_of
from vaultsync.model import FACT_WORDS, SideChange, phrase, plural
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import VaultScan

PERSON_SIDE = (Outcome.TO_MEMORY, Outcome.MERGED, Outcome.CONFLICT)
AGENT_SIDE = (Outcome.TO_VAULT, Outcome.CONVERGED, Outcome.MERGED, Outcome.CONFLICT)
SUBJECT_LIMIT = 100


def classify(kind: str, before: Any, after: Any) -> str:
    if kind == FACT:
        if before is None:
            return "+fact"
        if after is None:
            return "-fact"
        if after.get("status") == "superseded" and before.get("status") != "superseded":
            return "superseded"
        return "edited fact"
    if kind == ENTITY:
        if before is None:
            return "new entity"
        return "entity deleted" if after is None else "summary"
    if before is None:
        return "created"
    return "deleted" if after is None else "edited"


def side_changes(world: World, layout: VaultLayout) -> tuple[list[SideChange], set[str]]:
    """The changes each side made since the base, and the vault paths the person changed."""
    keyed, person_paths = keyed_changes(world, layout)
    return [change for _, change in keyed], person_paths


def keyed_changes(world: World, layout: VaultLayout) -> tuple[list[tuple[str, SideChange]], set[str]]:
    """``side_changes``, each change with its unit's key, in key order: the order of a commit message's scopes,
    which a pass run in batches restores by sorting."""
    changes: list[tuple[str, SideChange]] = []
    person_paths: set[str] = set()
    for key in sorted(world.units):
        state = world.units[key]
        outcome = state.decision.outcome if state.decision else Outcome.SKIP
        scope = sys.intern(scope_of(key))  # one string per entity, not per fact: a first import keeps them all
        if outcome in PERSON_SIDE:
            changes.append((key, SideChange("vault", scope, classify(state.kind, state.base, state.vault))))
            person_paths.add(state.vault_note.path if state.vault_note else layout.note_for_key(key))
        elif state.vault_note and state.vault_note.path != layout.note_for_key(key):
            # A daily note the person keeps in a date sub-folder: the move is theirs to commit, from where the
            # layout puts it (a path git no longer finds changed is left out of the commit).
            person_paths |= {state.vault_note.path, layout.note_for_key(key)}
        if outcome in AGENT_SIDE and not (outcome is Outcome.CONVERGED and state.memory == state.base):
            changes.append((key, SideChange("memory", scope, classify(state.kind, state.base, state.memory))))
    return changes, {p for p in person_paths if p}


def unchanged_notes(world: World) -> dict[str, str]:
    """The vault note of every unit neither side changed in meaning (path -> unit key): the notes a person may
    have saved again with the same values (Obsidian reordering keys, dropping quotes), whose bytes no pass writes
    back and so only a commit of the person's brings into git."""
    return {
        state.vault_note.path: key
        for key, state in world.units.items()
        if state.vault_note is not None and state.decision is not None and state.decision.outcome is Outcome.SAME
    }


def message(direction: str, changes: Sequence[SideChange], extra_scopes: Sequence[str] = ()) -> str:
    """A subject like ``memory -> vault: people/sarah +1 fact, 1 superseded; daily 2026-01-27``.

    When the subject would run long, it counts instead and the body lists every scope, so ``git log``
    stays readable after a first import of thousands of entities.
    """
    by_scope: dict[str, Counter[str]] = {}
    for change in changes:
        by_scope.setdefault(change.scope, Counter())[change.what] += 1
    lines = [f"{scope} {phrase(c)}" for scope, c in by_scope.items()]
    derived = [scope for scope in extra_scopes if scope not in by_scope]
    lines += [f"{scope} (derived properties)" for scope in derived]
    subject = f"{direction}: " + "; ".join(lines)
    if len(subject) <= SUBJECT_LIMIT:
        return subject
    totals: Counter[str] = Counter()
    for c in by_scope.values():
        totals.update(c)
    files = sum(1 for scope in by_scope if scope.endswith(".md") or scope.startswith("daily "))
    entities = len(by_scope) - files
    facts = phrase(Counter({w: n for w, n in totals.items() if w in FACT_WORDS}))
    parts = [plural(entities, "entity", "entities") + (f" ({facts})" if facts else "")]
    parts += [plural(files, "file")] if files else []
    parts += [plural(len(derived), "entity", "entities") + " with derived properties"] if derived else []
    subject = f"{direction}: " + ", ".join(p for p in parts if not p.startswith("0 "))
    return subject + "\n\n" + "\n".join(lines)


MOVES = "\uffff"  # sorts after every unit key


def changed(
    world: World,
    layout: VaultLayout,
    vault: VaultScan,
    base: Mapping[str, object],
    moves: list[tuple[str, str]],
    renamed: dict[str, str],
) -> tuple[list[tuple[str, SideChange]], set[str]]:
    """The changes each side made since the base (with their units' keys, see ``keyed_changes``; a move comes
    after every unit's change), and the vault paths that go in the person's commit: the notes they changed, the
    old and new places of the folders they moved, and the note of an entity folder they deleted even when the
    entity had no summary (no unit changed, so nothing else names the note)."""
    changes, person_paths = keyed_changes(world, layout)
    for old, new in moves:
        changes.append((MOVES, SideChange("vault", scope_of(entity_key(new)), f"moved from {old}")))
        moved = vault.entities[new]
        person_paths |= {n.path for n in moved.facts.values()} | ({moved.note.path} if moved.note else set())
        person_paths.add(layout.entity_note(old))
        person_paths |= {layout.fact_note(old, note_of(k)) for k in renamed.values() if k.startswith(facts_of(old))}
    synced_entities = {rel_of(k) for k in base if not is_file(k)}
    person_paths |= {
        layout.entity_note(rel) for rel in synced_entities if getattr(vault.entities.get(rel), "note", None) is None
    }
    return changes, person_paths
