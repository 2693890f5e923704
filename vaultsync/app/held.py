"""The person's answers to the shrink guard (``core/shrink.py``): ``accept`` lets a held change through,
``restore`` puts the last good version of a note (or of any note at any earlier commit) back on both sides.

Both run as a pass through the write path, under its lock, and commit as the person: the guard held the change
so that a person decides, and git says who did.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from vaultsync.config import Config
from vaultsync.errors import NotFound
from vaultsync.git import history
from vaultsync.keys import entity_key, fact_key, file_key
from vaultsync.model import PERSON, Report
from vaultsync.options import PassOptions
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write, read_or_none
from vaultsync.vault.layout import FACTS_DIR, VaultLayout
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

ALL = "all"
_HINT = "vaultsync status lists what is held"


def accept(cfg: Config, targets: Sequence[str]) -> Report:
    """Carry the held changes named by ``targets`` (vault paths or scopes as ``status`` names them, or ``all``)
    in a pass now, committed as the person. Raises NotFound for a target nothing is held at."""
    wanted = [_clean(t) for t in targets]
    if ALL not in wanted:
        from vaultsync.app.sync import status

        held = status(cfg).held
        known = {h.path for h in held} | {h.scope for h in held}
        unknown = [t for t in wanted if t not in known]
        if unknown:
            raise NotFound(f"nothing is held at {unknown[0]!r}", "path", _HINT)
    subject = "accept held change: " + ", ".join(wanted)
    options = PassOptions(accept=frozenset(wanted), commit_subject=subject)
    return write(cfg, WriteRequest("accept", PERSON, options))


def restore(cfg: Config, path: str, at: str | None = None) -> Report:
    """Put ``path`` (a note, or a folder: an entity's, the daily notes') back as commit ``at`` holds it (by
    default the newest commit holding it), in the vault and, through the pass that follows, in the memory:
    the restored version wins on both sides, committed as the person. Raises HistoryError for an unknown
    commit and NotFound when that commit holds nothing at ``path``."""
    where = _clean(path)
    commit = history.good_commit(cfg.vault, where, at)
    files = history.files_at(cfg.vault, commit, where)
    if not files:
        raise NotFound(f"{where!r} is not in the vault at commit {commit[:12]}", "path", "vaultsync log lists it")
    layout = VaultLayout(cfg.layout)
    keys = frozenset(k for k in (unit_of(layout, p) for p in files) if k)

    def apply() -> OwnWrites:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        for name, data in files.items():
            target = cfg.vault / name
            current = read_or_none(target)
            if current is not None and current != data:
                # What the note holds now may be an edit git has not seen: a copy goes to the trash first.
                kept = StateFiles(cfg.state_dir).trash(stamp) / "restored-over" / name
                kept.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(kept, current)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data, current)
        return OwnWrites(True, subject=f"restore {where} from {commit[:12]}")

    options = PassOptions(restore=keys)
    return write(cfg, WriteRequest("restore", PERSON, options, apply))


def unit_of(layout: VaultLayout, vault_path: str) -> str:
    """The unit key a vault note stands for: an entity note, a fact note or a mirrored file ("" for none)."""
    folder, _, name = vault_path.rpartition("/")
    owner, _, last = folder.rpartition("/")
    if name.endswith(".md") and last == FACTS_DIR:
        rel = layout.entity_rel_of_dir(owner)
        if rel and layout.facts_dir(rel) == folder:
            return fact_key(rel, name[:-3])
    rel = layout.entity_rel_of_dir(folder)
    if rel and layout.entity_note(rel) == vault_path:
        return entity_key(rel)
    mem_path = layout.file_for_note(vault_path)
    return file_key(mem_path) if mem_path is not None else ""


def _clean(target: str) -> str:
    return target.strip().strip("/")
