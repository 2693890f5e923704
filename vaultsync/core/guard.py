"""The safety checks a pass makes before it writes anything: values in, a reason to stop (or "") out.

Each says what triggers it, why, and what happens: the pass stops with exit 4 before any write and names what it
would have done; the person confirms with ``--yes``."""

from __future__ import annotations

from dataclasses import dataclass, field

from vaultsync.config import Config
from vaultsync.core.decide import UNKNOWN
from vaultsync.core.world import UnitState, World
from vaultsync.keys import scope_of


@dataclass
class Tally:
    """What a pass would delete on each side, out of how many units it read there: counted batch by batch by a
    full pass over a large memory, at once by any other."""

    total: dict[str, int] = field(default_factory=lambda: {"memory": 0, "vault": 0})
    doomed: dict[str, list[str]] = field(default_factory=lambda: {"memory": [], "vault": []})

    def add(self, world: World) -> list[str]:
        """Count ``world``'s units; returns the keys it would delete, on either side."""
        deleted = []
        for side in ("memory", "vault"):
            for key, state in world.units.items():
                value = getattr(state, side)
                if value is None or value is UNKNOWN or state.decision is None:
                    continue
                self.total[side] += 1
                if is_deleted(state):
                    self.doomed[side].append(key)
                    deleted.append(key)
        return deleted

    def guard(self, cfg: Config, unread: int = 0) -> str:
        """Why the pass must stop before writing anything, or "" when it may go on.

        Trigger: a pass would delete more than the configured share and count of one side's units. Why: a
        mis-mounted folder, a half-finished checkout or an agent bug looks exactly like "the person deleted
        everything". Then: stop with exit 4, name what would go, and let the person confirm with --yes.
        ``unread``: units a scoped pass did not read, there on both sides.
        """
        reasons = []
        for side, doomed in self.doomed.items():
            total = self.total[side] + unread
            if len(doomed) > cfg.safety.max_delete_count and len(doomed) > cfg.safety.max_delete_share * total:
                sample = ", ".join(sorted({scope_of(k) for k in doomed})[:5])
                what = f"{len(doomed)} of {total} units on the {side} side"
                reasons.append(f"the pass would delete {what} ({sample} ...)")
        return "; ".join(reasons)


def deletion_guard(world: World, cfg: Config, unread: int = 0) -> str:
    tally = Tally()
    tally.add(world)
    return tally.guard(cfg, unread)


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
