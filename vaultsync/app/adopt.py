"""Adopting a vault that already has Obsidian settings: ``init`` never overwrites a person's file, but the
property types the notes need are merged in, and settings that would make Obsidian's daily notes, templates or
Bases views miss what vaultsync writes are named, each with its fix."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.system.fs import atomic_write

TYPES = ".obsidian/types.json"
DAILY = ".obsidian/daily-notes.json"
TEMPLATES = ".obsidian/templates.json"
CORE_PLUGINS = ".obsidian/core-plugins.json"
# Obsidian's ids of the core plugins the vault relies on, and what each gives the person.
NEEDED_PLUGINS = {
    "daily-notes": "Daily notes (today's note in the daily folder)",
    "templates": "Templates (new facts from Templates/Fact)",
    "bases": "Bases (Memory.base and each entity's live view of its facts)",
}


@dataclass
class Adopted:
    """What adopting changed (``updated``) and what the person should fix in Obsidian (``warnings``)."""

    updated: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def merge_types(vault: Path, wanted: dict[str, str], result: Adopted) -> None:
    """Add the property types the notes need to the person's ``types.json``, keeping every other entry.

    A property of ours the person typed otherwise is set to ours, and said: its notes hold the values vaultsync
    writes (``related`` is a list), and a wrong type makes Obsidian's editor save them back in another shape
    (a list typed ``text`` becomes one string), which a pass would take for the person's edit.
    """
    path = vault / TYPES
    raw = path.read_bytes()
    doc = _read_json(path)
    types = doc.get("types") if isinstance(doc, dict) else None
    if not isinstance(types, dict):
        result.warnings.append(
            f'{TYPES}: not the JSON Obsidian writes ({{"types": {{...}}}}); left as it is, so Obsidian may show '
            f"vaultsync's properties with other types: fix or delete it and run `vaultsync init` again"
        )
        return
    changed = [name for name, kind in wanted.items() if name in types and types[name] != kind]
    missing = [name for name in wanted if name not in types]
    if not changed and not missing:
        return
    for name in changed:
        result.warnings.append(
            f"{TYPES}: '{name}' was typed {types[name]!r}; set to {wanted[name]!r}, the type of the values "
            "vaultsync writes (another type makes Obsidian save them back in another shape)"
        )
    types.update({name: wanted[name] for name in [*changed, *missing]})
    atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode(), raw)
    result.updated.append(TYPES)


def check_settings(vault: Path, daily: str, result: Adopted) -> None:
    """Warn, with the fix, when the person's Obsidian settings point elsewhere than the config, or turn off a
    core plugin the vault relies on. Only files already there are read: a missing one is Obsidian's default."""
    settings = _read_json(vault / DAILY)
    if isinstance(settings, dict):
        folder = str(settings.get("folder") or "").strip("/") or "."
        if folder != (daily.strip("/") or "."):
            result.warnings.append(
                f"{DAILY}: Obsidian's Daily notes go to '{folder}', the config's daily folder is '{daily}': "
                f"set Settings > Daily notes > New file location to '{daily}' (or [vault] daily = \"{folder}\" "
                "in the config before the first sync)"
            )
        fmt = settings.get("format") or "YYYY-MM-DD"
        if fmt != "YYYY-MM-DD":
            result.warnings.append(
                f"{DAILY}: Obsidian names daily notes '{fmt}', vaultsync reads YYYY-MM-DD: set Settings > "
                "Daily notes > Date format to YYYY-MM-DD, or today's note will not reach the agent"
            )
    settings = _read_json(vault / TEMPLATES)
    if isinstance(settings, dict) and str(settings.get("folder") or "").strip("/") != "Templates":
        where = str(settings.get("folder") or "") or "(none)"
        result.warnings.append(
            f"{TEMPLATES}: Obsidian's template folder is '{where}', vaultsync's templates are in 'Templates': "
            "set Settings > Templates > Template folder location to 'Templates', or move Templates/Fact.md "
            "and the others there"
        )
    plugins = _read_json(vault / CORE_PLUGINS)
    for plugin, use in NEEDED_PLUGINS.items():
        # Obsidian writes a list of the enabled ones (older versions) or an object of id -> enabled.
        off = (isinstance(plugins, list) and plugin not in plugins) or (
            isinstance(plugins, dict) and plugins.get(plugin) is False
        )
        if off:
            result.warnings.append(
                f"{CORE_PLUGINS}: the core plugin {use} is off: turn it on in Settings > Core plugins"
            )
