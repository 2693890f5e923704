"""What ``vaultsync init`` can find by itself: OpenClaw's agents and their workspaces, and the vaults Obsidian knows.

OpenClaw is read the way OpenClaw reads itself (2026.9): its home is ``OPENCLAW_HOME`` (else ``HOME``), its state
folder ``OPENCLAW_STATE_DIR`` (else ``~/.openclaw``, or ``~/.openclaw-<profile>`` for ``openclaw --profile NAME``
and ``OPENCLAW_PROFILE``, or the older ``~/.clawdbot`` when only that exists), its config ``OPENCLAW_CONFIG_PATH``
(else ``openclaw.json`` in the state folder), JSON5. Each agent of ``agents.list`` (or ``agents.entries``) has its
``workspace``, or, unset, the default workspace (``~/.openclaw/workspace``) for the default agent and a folder of
its own for the others; with no config the default workspace alone. Obsidian keeps its list of vaults in
``obsidian.json`` in its config folder, which depends on the platform and on how it was installed (Flatpak, Snap).
Nothing here writes; a file that cannot be read is the same as none, and ``problems`` says which.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Found", "FoundVault", "FoundWorkspace", "find", "life_of", "obsidian_config_dirs", "openclaw_paths"]

DEFAULT_AGENT = "main"  # OpenClaw's id for the one agent of a config that lists none
_PROFILE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$", re.I)


@dataclass(frozen=True)
class FoundWorkspace:
    path: Path
    agent: str  # the OpenClaw agent's id
    default: bool  # the agent OpenClaw runs when none is named
    source: str  # where it was read: the config file, or "OpenClaw's default workspace"


@dataclass(frozen=True)
class FoundVault:
    path: Path
    source: Path  # the obsidian.json that lists it
    last_open: bool  # the vault Obsidian had open last


@dataclass
class Found:
    workspaces: list[FoundWorkspace] = field(default_factory=list)
    vaults: list[FoundVault] = field(default_factory=list)
    openclaw_config: Path | None = None  # where OpenClaw's config is (or would be)
    looked_in: list[str] = field(default_factory=list)  # every place read, for the message when nothing is found
    problems: list[str] = field(default_factory=list)  # a config that exists but cannot be read


def _home(env: Mapping[str, str]) -> Path:
    """OpenClaw's home: ``OPENCLAW_HOME`` (``~`` in it is the user's home), else the user's home."""
    user = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    explicit = (env.get("OPENCLAW_HOME") or "").strip()
    if not explicit:
        return user
    return Path(re.sub(r"^~(?=$|[\\/])", lambda _: str(user), explicit)).resolve()


def _user_path(text: str, home: Path) -> Path:
    """A path from OpenClaw's config: ``~`` is OpenClaw's home."""
    text = text.strip()
    if text == "~" or text.startswith(("~/", "~\\")):
        return home / text[2:]
    return Path(text).expanduser() if not os.path.isabs(text) and text.startswith("~") else Path(text)


def _profile(env: Mapping[str, str], profile: str | None) -> str | None:
    name = (profile if profile is not None else env.get("OPENCLAW_PROFILE", "")).strip()
    return name if name and name.lower() != "default" and _PROFILE.match(name) else None


def openclaw_paths(env: Mapping[str, str], profile: str | None = None) -> tuple[Path, Path, Path]:
    """(state folder, config file, default workspace) as OpenClaw resolves them for ``env`` and ``profile``."""
    home = _home(env)
    named = _profile(env, profile)
    state_override = (env.get("OPENCLAW_STATE_DIR") or "").strip()
    if named and profile is not None:
        state = home / f".openclaw-{named}"  # `openclaw --profile NAME` sets the state folder itself
    elif state_override:
        state = _user_path(state_override, home)
    elif named:
        state = home / f".openclaw-{named}"
    else:
        state = home / ".openclaw"
        if not state.exists() and (home / ".clawdbot").exists():
            state = home / ".clawdbot"  # the name before OpenClaw
    config_override = (env.get("OPENCLAW_CONFIG_PATH") or "").strip()
    if config_override and not (named and profile is not None):
        config = _user_path(config_override, home)
    else:
        config = next(
            (state / n for n in ("openclaw.json", "clawdbot.json") if (state / n).is_file()), state / "openclaw.json"
        )
    workspace_override = (env.get("OPENCLAW_WORKSPACE_DIR") or "").strip()
    if workspace_override:
        workspace = Path(workspace_override).resolve()
    elif state_override or named:
        workspace = state / "workspace"
    else:
        workspace = home / ".openclaw" / "workspace"
    return state, config, workspace


def _read_json5(path: Path) -> Any:
    import json5  # OpenClaw's config is JSON5 (comments, trailing commas, unquoted keys)

    return json5.loads(path.read_text(encoding="utf-8"))


def _agents(config: Any) -> list[dict[str, Any]]:
    """The configured agents, from either shape OpenClaw reads: ``agents.entries`` (by id) or ``agents.list``."""
    agents = config.get("agents") if isinstance(config, dict) else None
    if not isinstance(agents, dict):
        return []
    entries = agents.get("entries")
    if isinstance(entries, dict):
        return [{**entry, "id": key} for key, entry in entries.items() if isinstance(entry, dict)]
    listed = agents.get("list")
    if isinstance(listed, list):
        return [entry for entry in listed if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
    return []


def _workspaces(config: Any, source: str, state: Path, default_workspace: Path, home: Path) -> list[FoundWorkspace]:
    """Each agent's workspace, as OpenClaw resolves it: its own ``workspace``; else, for the default agent (the
    only one, or the one marked ``default``), ``agents.defaults.workspace`` or the default workspace; else a
    folder named for the agent under ``agents.defaults.workspace``, or ``<state>/workspace-<id>``."""
    agents = _agents(config)
    defaults = config.get("agents", {}).get("defaults", {}) if isinstance(config, dict) else {}
    fallback = defaults.get("workspace") if isinstance(defaults, dict) else None
    fallback = fallback.strip() if isinstance(fallback, str) and fallback.strip() else None
    if not agents:
        path = _user_path(fallback, home) if fallback else default_workspace
        return [FoundWorkspace(path, DEFAULT_AGENT, True, source)]
    marked = [a["id"] for a in agents if a.get("default") is True]
    owner = agents[0]["id"] if len(agents) == 1 else (marked[0] if len(marked) == 1 else None)
    found = []
    for agent in agents:
        own = agent.get("workspace")
        if isinstance(own, str) and own.strip():
            path = _user_path(own, home)
        elif agent["id"] == owner:
            path = _user_path(fallback, home) if fallback else default_workspace
        elif fallback:
            path = _user_path(fallback, home) / agent["id"]
        else:
            path = state / f"workspace-{agent['id']}"
        found.append(FoundWorkspace(path, agent["id"], agent["id"] == owner, source))
    return found


def obsidian_config_dirs(env: Mapping[str, str], platform: str = sys.platform) -> list[Path]:
    """Where Obsidian keeps ``obsidian.json``, most likely first: the platform's config folder, then the places a
    Flatpak or Snap install uses on Linux."""
    home = Path(env.get("HOME") or Path.home())
    if platform == "darwin":
        return [home / "Library" / "Application Support" / "obsidian"]
    if platform.startswith("win"):
        appdata = env.get("APPDATA")
        return [Path(appdata) / "obsidian"] if appdata else [home / "AppData" / "Roaming" / "obsidian"]
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        config / "obsidian",
        config / "Obsidian",
        home / ".var" / "app" / "md.obsidian.Obsidian" / "config" / "obsidian",
        home / "snap" / "obsidian" / "current" / ".config" / "obsidian",
    ]


def _vaults(listing: Path) -> list[FoundVault]:
    value = json.loads(listing.read_text(encoding="utf-8"))
    vaults = value.get("vaults") if isinstance(value, dict) else None
    if not isinstance(vaults, dict):
        return []
    found = []
    entries = [v for v in vaults.values() if isinstance(v, dict) and isinstance(v.get("path"), str)]
    for entry in sorted(entries, key=lambda v: -v["ts"] if isinstance(v.get("ts"), int | float) else 0):
        found.append(FoundVault(Path(entry["path"]), listing, entry.get("open") is True))
    return found


def find(env: Mapping[str, str] | None = None, profile: str | None = None, platform: str = sys.platform) -> Found:
    """Every OpenClaw workspace and Obsidian vault this user has, as OpenClaw's and Obsidian's own files say."""
    env = os.environ if env is None else env
    found = Found()
    state, config_path, default_workspace = openclaw_paths(env, profile)
    found.openclaw_config = config_path
    found.looked_in.append(str(config_path))
    config: Any = {}
    source = "OpenClaw's default workspace"
    if config_path.is_file():
        try:
            config = _read_json5(config_path)
            source = str(config_path)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            found.problems.append(f"{config_path}: cannot read OpenClaw's config ({exc}); its agents are left out")
    found.workspaces = _workspaces(config, source, state, default_workspace, _home(env))
    found.looked_in.append(str(default_workspace))
    seen: set[Path] = set()
    for folder in obsidian_config_dirs(env, platform):
        listing = folder / "obsidian.json"
        found.looked_in.append(str(listing))
        if not listing.is_file():
            continue
        try:
            vaults = _vaults(listing)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            found.problems.append(f"{listing}: cannot read Obsidian's list of vaults ({exc})")
            continue
        for vault in vaults:
            if vault.path not in seen:
                seen.add(vault.path)
                found.vaults.append(vault)
    return found


def life_of(workspace: Path) -> Path:
    """The workspace's own knowledge graph folder, where OpenClaw-style agents keep ``life/``."""
    return workspace / "life"
