"""The per-unit decision: a pure function of (base, memory, vault), in the spirit of Unison's specification.

Safety: a side's change is never overwritten unless the result contains it or a conflict copy keeps it.
Maximality: every change that does not conflict is propagated. ``None`` means "absent on that side"; a side
that could not be read this pass is ``UNKNOWN`` and its unit is left exactly as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


class Outcome(StrEnum):
    SAME = "same"  # nothing changed anywhere
    CONVERGED = "converged"  # both sides hold the same new content (e.g. after an interrupted pass)
    TO_VAULT = "to_vault"  # memory changed: the vault follows
    TO_MEMORY = "to_memory"  # vault changed: memory follows
    MERGED = "merged"  # both changed; merged without conflict
    CONFLICT = "conflict"  # both changed incompatibly: memory's version wins, the vault's is kept in a copy
    SKIP = "skip"  # a side is unreadable this pass


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    result: Any = None  # what both sides hold after the pass (None: the unit is gone)
    detail: str = ""  # for conflicts: what clashed


Merge = Callable[[Any, Any, Any], tuple[Any, str]]  # (base, memory, vault) -> (merged, conflict detail or "")


def decide(base: Any, memory: Any, vault: Any, same: Callable[[Any, Any], bool], merge: Merge) -> Decision:
    if memory is UNKNOWN or vault is UNKNOWN:
        return Decision(Outcome.SKIP, base)
    if same(memory, vault):
        return Decision(Outcome.SAME if same(memory, base) else Outcome.CONVERGED, memory)
    if same(memory, base):
        return Decision(Outcome.TO_MEMORY, vault)
    if same(vault, base):
        return Decision(Outcome.TO_VAULT, memory)
    # Both sides changed, differently. An edit beats a delete: deleting what the other side just changed
    # would lose that change.
    if memory is None:
        return Decision(Outcome.TO_MEMORY, vault)
    if vault is None:
        return Decision(Outcome.TO_VAULT, memory)
    merged, conflict = merge(base, memory, vault)
    if conflict:
        return Decision(Outcome.CONFLICT, merged, conflict)
    return Decision(Outcome.MERGED, merged)


READ_ONLY = "the agent alone writes this file, so an edit of its note is not carried to memory"


def decide_read_only(base: Any, memory: Any, vault: Any) -> Decision:
    """A file only the agent writes (DREAMS.md, dreaming's diary): memory's version is the one both sides hold.

    A person's edit of the note is never carried, and never lost either: it is a conflict, whose copy keeps the
    edit beside the note while the note goes back to memory's text. A deleted note comes back.
    """
    if memory is UNKNOWN or vault is UNKNOWN:
        return Decision(Outcome.SKIP, base)
    if memory == vault:
        return Decision(Outcome.SAME if memory == base else Outcome.CONVERGED, memory)
    if vault is None or vault == base:
        return Decision(Outcome.TO_VAULT, memory)
    return Decision(Outcome.CONFLICT, memory, READ_ONLY)
