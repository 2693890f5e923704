"""The sizes the agent can live with: HEARTBEAT.md is read at every heartbeat and MEMORY.md at every session, and
each bootstrap file is cut at the agent's per-file context limit. Oversized files are warned about, never
blocked or trimmed: what to drop is the person's or the agent's call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vaultsync.config import Janitor
from vaultsync.memory.tree import MemFile
from vaultsync.model import Problem, Severity

__all__ = ["BOOTSTRAP_FILES", "scanned_size_problems", "size_problems"]

# The workspace files an agent of the OpenClaw kind loads into its context at the start of a session.
BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "MEMORY.md")
# OpenClaw 2026.9 loads a USER.md (the shared one, or a person's users/<id>/USER.md) only up to this many characters,
# and a person's file over it not at all.
USER_MAX_CHARS = 4000


def size_problems(path: Path, raw: bytes, limits: Janitor) -> list[Problem]:
    """Warnings for one workspace file over its line limit or the per-file character limit.

    They are standing (``Problem.standing``): the same bytes give the same warning on every pass, so a pass
    that finds only these still settles and the quick check repeats them until the file shrinks.
    """
    lines = {"HEARTBEAT.md": limits.heartbeat_max_lines, "MEMORY.md": limits.memory_max_lines}.get(path.name, 0)
    text = raw.decode("utf-8", "replace")
    out = []
    count = len(text.splitlines())
    if lines and count > lines:
        out.append(f"{count} lines, over the {lines}-line limit the agent expects; move older parts out")
    chars = len(text)
    if limits.bootstrap_max_chars and chars > limits.bootstrap_max_chars:
        out.append(
            f"{chars} characters, over the agent's per-file limit of {limits.bootstrap_max_chars} "
            "([janitor] bootstrap_max_chars); the agent sees it cut short"
        )
    if path.name == "USER.md" and chars > USER_MAX_CHARS:
        out.append(
            f"{chars} characters, over the {USER_MAX_CHARS:,} OpenClaw loads of a USER.md (a person's own is then "
            "left out whole); supersede or drop older directives"
        )
    return [Problem(str(path), message, Severity.WARNING, standing=True) for message in out]


def scanned_size_problems(files: Mapping[str, MemFile], limits: Janitor) -> list[Problem]:
    """The size warnings for the workspace files a pass read (MEMORY.md, HEARTBEAT.md, every USER.md), as every
    pass reports them."""
    users = sorted(k for k in files if k.startswith("workspace/users/") and k.endswith("/USER.md"))
    out = []
    for key in ("workspace/MEMORY.md", "workspace/HEARTBEAT.md", "workspace/USER.md", *users):
        found = files.get(key)
        if found is not None and not found.broken:
            out += size_problems(found.path, found.raw, limits)
    return out
