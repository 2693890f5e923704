"""Notes gone from where a pass reads them while their unit lives on: values in, the keys to hold out.

A note the person moved where a pass does not read (a fact note into ``facts/old/``, an entity folder to a
top-level ``Archive/``) or that iCloud evicted (``.name.md.icloud``) still exists: taking it for deleted would
delete the agent's copy. The engine looks for such notes only when a unit's note is gone (``gone``), and this
module turns each one found into a unit left alone on both sides, reported.
"""

from __future__ import annotations

from collections.abc import Mapping

from vaultsync.core.decide import UNKNOWN
from vaultsync.core.units import World
from vaultsync.model import Problem
from vaultsync.vault.layout import VaultLayout


def gone(world: World, layout: VaultLayout) -> dict[str, str]:
    """Unit key -> the vault path of its note, for each unit synced before whose note is gone from its place
    while the memory side still holds it: what a pass would otherwise delete from the memory."""
    return {
        key: layout.note_for_key(key)
        for key, state in world.units.items()
        if state.base is not None and state.vault is None and state.memory not in (None, UNKNOWN)
    }


def hold(world: World, missing: Mapping[str, str], found: Mapping[str, str]) -> None:
    """Leave each unit whose note was ``found`` elsewhere (note path -> where it is) alone on both sides, and
    say where its note is and what to do; ``missing`` is ``gone``'s answer."""
    for key, path in missing.items():
        where = found.get(path)
        if where is None:
            continue
        world.units[key].vault = UNKNOWN
        if where.endswith(".icloud"):
            why = f"iCloud has not downloaded it ({where}); open it in Obsidian or Finder to bring it back"
        else:
            why = f"it is at {where}, where vaultsync does not read; move it back, or delete it to delete it"
        world.problems.append(Problem(path, f"missing here, but {why}; both sides left as they are"))
