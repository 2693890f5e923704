"""The planner: from decisions to a plan, the vault side first (a note is overwritten only once the copy of the
person's version is safe), then the memory side, then the base's updates."""

from __future__ import annotations

from vaultsync.config import Config
from vaultsync.core.plan import Plan
from vaultsync.core.plan_memory import MemorySide
from vaultsync.core.plan_vault import VaultSide
from vaultsync.core.scope import Context, Planned
from vaultsync.core.units import World
from vaultsync.memory.tree import MemoryScan
from vaultsync.model import PARA_KEYS
from vaultsync.state.entry import BaseEntry
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import VaultScan


class Planner(VaultSide, MemorySide):
    """Both sides of a plan, over one target state."""


def make_plan(
    cfg: Config,
    layout: VaultLayout,
    world: World,
    mem: MemoryScan,
    vault: VaultScan,
    base: dict[str, BaseEntry],
    stamp: str,
    context: Context | Planned | None = None,
) -> Plan:
    """The plan for the units of ``world``; with ``context``, a scoped pass's, whose other entities are unread."""
    planner = Planner(cfg, layout, world, mem, vault, base, context)
    planner.plan.keep_dirs = {cfg.workspace, cfg.workspace / "memory", cfg.life, cfg.vault}
    planner.plan.keep_dirs |= {cfg.life / para for para in PARA_KEYS}
    planner.plan.keep_dirs |= {cfg.vault / folder for folder in (*cfg.layout.para_folders().values(), cfg.layout.daily)}
    planner.target()
    planner.conflicts(stamp)  # first: a note is overwritten only once the copy of the person's version is safe
    planner.vault_side()
    if planner.plan.widen:
        return planner.plan
    planner.memory_side()
    planner.base_updates()
    return planner.plan
