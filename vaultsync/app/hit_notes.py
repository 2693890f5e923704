"""Where the notes recall hits name are in the vault, as the vault side finds them.

The index keeps the place a pass writes a note (``VaultLayout``), but a daily note may live in a date sub-folder
(``Daily/2026/11/2026-11-29.md``) and a fact the agent wrote since the last pass has no note yet. A face hands
the path to a client that opens it (the Obsidian plugin), so every path answered is one that exists: a daily
note not where the layout puts it is looked for in the daily folder's date sub-folders (``find_daily_notes``,
the scan's own walk), and a note found nowhere is answered as None rather than as a path that leads nowhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from vaultsync.config import Config
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import find_daily_notes

__all__ = ["existing_notes"]


def existing_notes(cfg: Config, paths: Sequence[str | None]) -> list[str | None]:
    """Each of ``paths`` as a note that exists in the vault, or None: a stat per path, and one walk of the daily
    folder only when a daily note is not where the layout puts it."""
    out = list(paths)
    missing = [n for n, path in enumerate(paths) if path is not None and not (cfg.vault / path).is_file()]
    if not missing:
        return out
    layout = VaultLayout(cfg.layout)
    daily = {n: name for n in missing if (name := layout.daily_of_note(str(paths[n])))}
    found = find_daily_notes(cfg.vault, layout, set(daily.values())) if daily else {}
    for n in missing:
        out[n] = found.get(f"workspace/memory/{daily[n]}") if n in daily else None
    return out
