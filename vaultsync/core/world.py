"""The units of a pass as gathered (``core/units.py``): each unit's base, memory and vault values, and what the
scans found beside them. Its own module so that ``core/vault_facts.py`` fills it without an import cycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vaultsync.core.decide import Decision
from vaultsync.model import Problem, Record
from vaultsync.vault.scan import Note


@dataclass
class UnitState:
    key: str
    kind: str
    base: Any = None
    memory: Any = None
    vault: Any = None
    vault_note: Note | None = None  # the note as found in the vault, if any
    decision: Decision | None = None


@dataclass
class Minted:
    """A fact note renamed to its fact's id: one the person created (its record gets an id), or one renamed,
    restored from the trash or re-downloaded under another name (``core/claims.py``)."""

    rel: str
    note_id: str
    old_path: str
    old_raw: bytes  # what the note under its old name holds: it is removed only if it still does


@dataclass
class World:
    units: dict[str, UnitState] = field(default_factory=dict)
    mem_facts: dict[str, dict[str, tuple[int, Record]]] = field(default_factory=dict)
    styles: dict[str, dict[str, str]] = field(default_factory=dict)
    minted: dict[str, Minted] = field(default_factory=dict)  # unit key -> rename
    new_ids: list[tuple[str, str]] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # entities whose items.json cannot be read
    fact_text: bool = False  # ``[vault] fact_text_property``: fact notes hold their text as a property too

    def ids(self) -> list[tuple[str, str]]:
        """(entity, fact id) of every id in use: the new ones and those the memory holds."""
        held = [
            (rel, str(r.get("id")))
            for rel, facts in self.mem_facts.items()
            for _, r in facts.values()
            if isinstance(r.get("id"), str)
        ]
        return self.new_ids + held

    def unit(self, key: str, kind: str) -> UnitState:
        state = self.units.get(key)
        if state is None:
            state = self.units[key] = UnitState(key, kind)
        return state
