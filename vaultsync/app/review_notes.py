"""Which weekly review note is the latest, for a face that offers to open it.

Review notes are named for their ISO week (``2026-W49.md``, ``core/review_note.py``), so the latest is the
greatest name in the review folder; its modification time says nothing (a ticked fix rewrites an old one).
"""

from __future__ import annotations

import re

from vaultsync.config import Config

__all__ = ["latest"]

WEEK_NOTE = re.compile(r"\d{4}-W\d{2}\.md")


def latest(cfg: Config) -> str | None:
    """The vault-relative path of the newest review note; None before the first review."""
    folder = cfg.vault / cfg.review.folder
    try:
        names = [e.name for e in folder.iterdir() if WEEK_NOTE.fullmatch(e.name) and e.is_file()]
    except OSError:
        return None
    return f"{cfg.review.folder}/{max(names)}" if names else None
