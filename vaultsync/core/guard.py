"""The safety checks a pass makes before it writes anything: values in, a reason to stop (or "") out.

Each says what triggers it, why, and what happens: the pass stops with exit 4 before any write and names what it
would have done; the person confirms with ``--yes``. Deleting or shrinking too much is not a stop but a hold of
that change alone (``shrink.py``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, fields

from vaultsync.config import Layout, Safety
from vaultsync.core.decide import UNKNOWN
from vaultsync.core.shrink import too_many
from vaultsync.core.world import UnitState, World
from vaultsync.keys import is_file, mem_path_of, rel_of
from vaultsync.vault.layout import VaultLayout


@dataclass
class Tally:
    """What a pass would delete on each side, out of how many units it read there: counted batch by batch by a
    full pass over a large memory, at once by any other."""

    total: dict[str, int] = field(default_factory=lambda: {"memory": 0, "vault": 0})
    doomed: dict[str, list[str]] = field(default_factory=lambda: {"memory": [], "vault": []})

    def add(self, world: World, meant: Collection[str] = ()) -> list[str]:
        """Count ``world``'s units; returns the keys it would delete, on either side. ``meant``: keys a use case
        deleted on purpose (the janitor's archived notes), returned but not counted against the guard."""
        deleted = []
        for side in ("memory", "vault"):
            for key, state in world.units.items():
                value = getattr(state, side)
                if value is None or value is UNKNOWN or state.decision is None:
                    continue
                self.total[side] += 1
                if is_deleted(state):
                    if key not in meant:
                        self.doomed[side].append(key)
                    deleted.append(key)
        return deleted

    def over(self, safety: Safety) -> bool:
        """Whether one side would lose "many" units (``core/shrink.py``'s bound): a pass in batches then gives
        way to a whole pass, which holds those deletions."""
        return any(too_many(len(doomed), self.total[side], safety) for side, doomed in self.doomed.items())


def is_deleted(state: UnitState) -> bool:
    return state.decision is not None and state.decision.result is None


def empty_side(empty: dict[str, bool], synced: bool) -> str:
    """Why a pass must stop when a side holds nothing (``empty``: per side) while the last sync had content."""
    if not synced:
        return ""
    for side, nothing in empty.items():
        if nothing:
            return f"the {side} side is empty while the last sync had content; is a folder unmounted?"
    return ""


def changed_settings(old: Layout, new: Layout) -> list[str]:
    """The ``[vault]`` settings that differ between two layouts, as ``[vault] daily: 'Daily' -> '.'``."""
    return [
        f"[vault] {f.name}: {getattr(old, f.name)!r} -> {getattr(new, f.name)!r}"
        for f in fields(Layout)
        if getattr(old, f.name) != getattr(new, f.name)
    ]


def relocated(old: VaultLayout, new: VaultLayout, keys: Iterable[str]) -> dict[str, str]:
    """Each synced place that ``new`` puts elsewhere than ``old`` did: old vault path -> new one.

    Trigger: a ``[vault]`` folder setting changed since the base was saved. Why: a pass reads each unit where
    the layout says, so a note still in the old place looks deleted and the agent's file would go with it.
    Then: the engine looks which old places still exist and stops before writing (exit 4). A place is an
    entity's folder (its facts follow it) or a mirrored file's note.
    """
    places: dict[str, str] = {}
    rels: set[str] = set()
    for key in keys:
        if is_file(key):
            mem_path = mem_path_of(key)
            before, after = old.file_note(mem_path), new.file_note(mem_path)
            if before and before != after:
                places[before] = after or ""
        else:
            rels.add(rel_of(key))
    for rel in rels:
        before, after = old.entity_dir(rel), new.entity_dir(rel)
        if before != after:
            places[before] = after
    return places


def stranded(settings: list[str], places: dict[str, str], found: list[str]) -> str:
    """Why a pass under a changed layout must stop: ``found`` are the old places (of ``places``) still there."""
    if not found:
        return ""
    moves = sorted({(_folder(old), _folder(places[old])) for old in found})
    hint = ", ".join(f"'{a}' -> '{b}'" for a, b in moves[:5])
    sample = ", ".join(found[:5])
    return (
        f"the vault layout changed since the last sync ({'; '.join(settings)}) and {len(found)} synced note(s) "
        f"are still where the old layout put them ({sample}{' ...' if len(found) > 5 else ''}); they would be "
        f"taken for deleted: move them ({hint}), or set the config back"
    )


def _folder(path: str) -> str:
    parent = path.rpartition("/")[0] if path.endswith(".md") else path
    return f"{parent}/" if parent else "the top of the vault"
