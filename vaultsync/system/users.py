"""Finding the per-person USER.md files of a workspace, ``users/<id>/USER.md`` (OpenClaw 2026.9), for the memory
scan and the quick check's stat walk alike, so the two never disagree on which files a pass reads."""

from __future__ import annotations

import os
from pathlib import Path

from vaultsync.model import USERS_DIR
from vaultsync.names import name_problem


def user_files(workspace: Path) -> list[str]:
    """Workspace-relative paths ``users/<id>/USER.md`` for each folder of ``users/`` whose name is usable in the
    vault, whether or not it holds the file yet. A ``users/`` that is a link, and links below it, are not entered
    (OpenClaw refuses such aliases too)."""
    users = workspace / USERS_DIR
    if users.is_symlink() or not users.is_dir():
        return []
    try:
        with os.scandir(users) as it:
            ids = sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    return [f"{USERS_DIR}/{i}/USER.md" for i in ids if not i.startswith(".") and name_problem(i) is None]
