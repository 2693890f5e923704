"""What a pass needs before it writes: what it runs with (``PassContext``), the stops for folders gone or a
changed layout, the notes moved where a pass does not read, and the conflict copies the person resolved. What
it writes, and in what order, is ``finish.py``'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from vaultsync.config import Config, Layout
from vaultsync.core.decide import UNKNOWN, Decision, Outcome
from vaultsync.core.guard import changed_settings, relocated, stranded
from vaultsync.core.shrink import find_held, held_keys
from vaultsync.core.units import World
from vaultsync.core.vanished import gone, hold
from vaultsync.keys import is_file, mem_path_of, rel_of
from vaultsync.model import Held
from vaultsync.options import PassOptions
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.state.stat_walk import MemoryWalk
from vaultsync.vault.elsewhere import find_elsewhere
from vaultsync.vault.layout import VaultLayout


@dataclass(frozen=True)
class PassContext:
    """What every way of running a pass shares: the config and options, the layout, the base, the day, and the
    memory walk the quick check made."""

    cfg: Config
    options: PassOptions
    layout: VaultLayout
    store: BaseStore
    today: date
    walk: MemoryWalk

    @property
    def files(self) -> StateFiles:
        return StateFiles(self.cfg.state_dir)


def missing_places(cfg: Config, layout: VaultLayout, base: Iterable[str]) -> str:
    """Folders the last sync filled that are gone now, on either side.

    Trigger: a top folder of the vault (``2 Areas``; not the daily folder, whose notes the shrink guard holds)
    or of the memory tree (``life/areas``, ``memory/``) that held synced units is missing. Why: a renamed folder
    in the config, an unmounted disk or a half-done move looks exactly like "everything in it was deleted". Then:
    stop before writing (exit 4).
    """
    vault_tops: set[str] = set()
    memory_dirs: set[Path] = set()
    paras: set[str] = set()  # every entity's and fact's places follow from its PARA folder: one look per folder
    for key in base:
        if is_file(key):
            note = layout.note_for_key(key)
            vault_tops.add(note.split("/", 1)[0] if "/" in note else "")  # "": a daily note at the top
            root, _, sub = mem_path_of(key).partition("/")
            top = sub.split("/", 1)[0] if "/" in sub else ""
            memory_dirs.add((cfg.workspace if root == "workspace" else cfg.life) / top)
        else:
            paras.add(rel_of(key).split("/", 1)[0])
    for para in paras:
        vault_tops.add(layout.para_folder(para).split("/", 1)[0])
        memory_dirs.add(cfg.life / para)
    # The daily folder is the one a person empties on purpose (a month of notes, the whole folder): what it loses
    # is bounded by the shrink guard, which holds it for accept or restore, so its absence is no reason to stop.
    daily = layout.daily_dir.split("/", 1)[0]
    gone = [f"vault folder '{t}'" for t in sorted(vault_tops - {daily}) if t and not (cfg.vault / t).is_dir()]
    gone += [f"memory folder {d}" for d in sorted(memory_dirs) if not d.is_dir()]
    if not gone:
        return ""
    return f"{', '.join(gone)} held synced notes and is missing (renamed in the config, or not mounted?)"


def changed_layout(cfg: Config, store: BaseStore) -> str:
    """Why a pass must stop because a ``[vault]`` folder setting changed while synced notes stayed put, or "".

    The base records the layout it was saved with; only when that differs are the old places looked at (one
    look per entity folder and mirrored file), so an unchanged config costs one query. ``--yes`` does not
    override this stop: the notes exist, they are only not where the config says.
    """
    recorded = store.layout()
    old = Layout.from_json(recorded) if recorded is not None and recorded != cfg.layout.as_json() else None
    if old is None:
        return ""
    places = relocated(VaultLayout(old), VaultLayout(cfg.layout), store.keys())
    found = sorted(p for p in places if (cfg.vault / p).exists())
    return stranded(changed_settings(old, cfg.layout), places, found)


def hold_moved(cfg: Config, layout: VaultLayout, world: World) -> None:
    """Before deciding: units whose note is gone from its place but still in the vault (moved where a pass does
    not read, evicted by iCloud) are left alone on both sides and reported, never deleted from the memory.
    The vault is searched only when some unit's note is gone."""
    missing = gone(world, layout)
    if missing:
        hold(world, missing, find_elsewhere(cfg.vault, layout, set(missing.values())))


def hold_shrinks(setting: PassContext, world: World, unread: int = 0) -> list[Held]:
    """After deciding: the notes ``vaultsync restore`` put back win on both sides, then every change the shrink
    guard holds (``core/shrink.py``) is left as it is: the side that shrank keeps its change, the other its
    copy, and the unit keeps its base, so the next pass finds it again until it is accepted or restored."""
    for key in setting.options.restore:
        state = world.units.get(key)
        if state is not None and state.vault is not None and state.vault is not UNKNOWN:
            state.decision = Decision(Outcome.TO_MEMORY, state.vault)
    options = setting.options
    meant = options.deleting | options.restore
    accepted = options.accept | ({"all"} if options.confirm_deletes else set())  # --yes: "I meant all of it"
    held = find_held(world, setting.cfg.safety, setting.layout, meant, accepted, unread)
    for key, side in held_keys(held).items():
        state = world.units[key]
        setattr(state, side, UNKNOWN)
        state.decision = Decision(Outcome.SKIP, state.base)
    return held


def held_notes(layout: VaultLayout, held: Iterable[Held]) -> set[str]:
    """The vault notes of the held units, and the entity note of every entity with a held unit: none of them
    goes into the person's commit while the change is held."""
    keys = {key for h in held for key in h.keys}
    rels = {rel_of(key) for key in keys if rel_of(key)}
    return {layout.note_for_key(key) for key in keys} | {layout.entity_note(rel) for rel in rels}


def settle_conflicts(
    cfg: Config, layout: VaultLayout, known: dict[str, tuple[str, str]], moves: list[tuple[str, str]]
) -> tuple[list[str], dict[str, tuple[str, str, str]], list[str]]:
    """The conflict copies gone from where the store knows them, those of them carried along by a folder move
    (new path -> key, detail, old path), and those the person resolved by deleting them.

    A copy is resolved when the person deletes it; one that moved with its entity folder is open still.
    """
    gone = sorted(p for p in known if not (cfg.vault / p).exists())
    carried: dict[str, tuple[str, str, str]] = {}
    for old, new in moves:
        old_dir, new_dir = layout.entity_dir(old), layout.entity_dir(new)
        for path in gone:
            moved_to = new_dir + path[len(old_dir) :]
            if path.startswith(old_dir + "/") and (cfg.vault / moved_to).exists():
                key, detail = known[path]
                carried[moved_to] = (key.replace(old, new, 1), detail, path)
    resolved = [p for p in gone if not any(p.startswith(layout.entity_dir(old) + "/") for old, _ in moves)]
    return gone, carried, resolved
