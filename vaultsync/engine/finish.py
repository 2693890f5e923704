"""The end of every change: what is committed, and as whom.

Every commit a change makes goes through here or ``tail.py``'s steps that the strategies share, never around
them: the secret guard reads each file first, and the author is built from the ``Actor`` (``git/repo.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.config import Config
from vaultsync.model import Actor, Report


def commit_files(cfg: Config, paths: Iterable[str], subject: str, actor: Actor, report: Report) -> None:
    """Commit vault files a use case wrote outside the places a pass carries (a review note, the settings
    ``init`` adds), as ``actor``; a file holding a secret is left out and reported, as in a pass."""
    from vaultsync.engine.tail import commit, open_repo  # git and the secret guard: only when there is a file

    repo = open_repo(cfg, report)
    if repo is None:
        return
    commit(repo, cfg.vault, set(paths), subject, repo.author(actor, cfg.git), report)
