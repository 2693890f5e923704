"""``vaultsync openclaw install``: hand the packaged OpenClaw plugin to OpenClaw and point it at this vaultsync.

The plugin ships bundled inside the Python package (``vaultsync/openclaw_plugin/``: one ``index.js`` holding its
runtime package too, the manifest and a ``package.json``; docs/openclaw.md), so no Node and no ``npm`` are needed
to install it: OpenClaw brings the Node it runs plugins in. Installing copies those files to a folder of the
user's data folder that stays put when the package is upgraded or moved, links that folder into OpenClaw with
OpenClaw's own ``plugins install --link``, and writes the plugin's settings in one ``config set --batch-json``
(one write of OpenClaw's config, checked by OpenClaw as a whole). Without ``openclaw`` on the PATH the same
commands are returned for the person to run where OpenClaw is.

OpenClaw's config is also read here, as a file (the way ``discover`` finds it), for ``doctor``: it says what is
installed without starting OpenClaw, which takes seconds.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from vaultsync import config as configmod
from vaultsync.app.discover import openclaw_paths
from vaultsync.app.obsidian import DEFAULT_URL
from vaultsync.config import Config
from vaultsync.errors import ConfigError, NotBuilt, OpenClawRefused
from vaultsync.system import services
from vaultsync.system.fs import atomic_write

__all__ = ["DEFAULT_URL", "MODES", "PLUGIN_ID", "OpenClawSetup", "Planned", "install", "read_setup", "shipped"]

PLUGIN_ID = "vaultsync-memory"
ENTRY = f"plugins.entries.{PLUGIN_ID}"
MODES = ("supplement", "slot")
FILES = ("index.js", "openclaw.plugin.json", "package.json")
TIMEOUT = 300  # seconds for one openclaw command: it loads every plugin it has, which takes a while


@dataclass
class Planned:
    """What ``install`` did or, without ``openclaw`` on the PATH, what the person runs."""

    folder: str  # where the plugin's files are, linked into OpenClaw
    mode: str
    base_url: str
    token_file: str
    commands: list[list[str]] = field(default_factory=list)
    ran: bool = False  # the commands were run here; False: they are for the person to run

    def lines(self) -> list[str]:
        return [shlex.join(argv) for argv in self.commands]

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "mode": self.mode,
            "baseUrl": self.base_url,
            "tokenFile": self.token_file,
            "ran": self.ran,
            "commands": self.lines(),
        }


@dataclass
class OpenClawSetup:
    """What OpenClaw's config says of the plugin: its entry, the memory slot, the folders it loads plugins from."""

    config_path: Path
    entry: dict[str, Any] | None
    memory_slot: str
    memory_core_enabled: bool
    load_paths: list[Path]


def shipped() -> Path:
    """Where the package keeps the bundled plugin."""
    return Path(str(resources.files("vaultsync") / "openclaw_plugin"))


def plugin_folder() -> Path:
    """The folder OpenClaw loads the plugin from: in the user's data folder, so upgrading vaultsync (or removing
    the source checkout it ran from) never takes it away from under OpenClaw."""
    return configmod.data_dir() / "openclaw-plugin"


def install(cfg: Config, *, mode: str = "supplement", url: str = DEFAULT_URL, source: Path | None = None) -> Planned:
    """Copy the plugin, link it into OpenClaw and write its settings; run again, it updates the files and the
    settings. Raises ``OpenClawRefused`` naming the command that failed and what OpenClaw said."""
    if mode not in MODES:
        raise ConfigError(f"--mode {mode!r}: expected one of {', '.join(MODES)}")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url {url!r}: expected the API's address, e.g. {DEFAULT_URL}")
    token = cfg.token_path
    if token is None or not token.is_file():
        raise ConfigError(f"{token or 'the config'}: no API token file for the plugin to read; run `vaultsync init`")
    source = source or shipped()
    missing = [name for name in FILES if not (source / name).is_file()]
    if missing:
        raise NotBuilt(
            f"{source}: no bundled plugin ({', '.join(missing)} missing); bundle it with `npm ci && npm run bundle` "
            "in plugins/openclaw of a source checkout"
        )
    folder = plugin_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        atomic_write(folder / name, (source / name).read_bytes())
    planned = Planned(str(folder), mode, url.rstrip("/"), str(token))
    planned.commands = _commands(planned, read_setup(os.environ))
    if shutil.which("openclaw") is None:
        return planned
    for argv in planned.commands:
        said = services.run_command(argv, timeout=TIMEOUT)
        if not said.ok:
            raise OpenClawRefused(f"`{shlex.join(argv)}` failed (exit {said.code}): {_last_lines(said.out)}")
    planned.ran = True
    return planned


def _commands(planned: Planned, setup: OpenClawSetup | None) -> list[list[str]]:
    """The install, one batch of settings, and the memory slot: given to the plugin in slot mode (memory-core
    disabled), given back to memory-core in supplement mode when an earlier slot install took it."""
    settings: list[tuple[str, object]] = [
        (f"{ENTRY}.hooks.allowConversationAccess", True),
        (f"{ENTRY}.config.baseUrl", planned.base_url),
        (f"{ENTRY}.config.tokenFile", planned.token_file),
        (f"{ENTRY}.config.mode", planned.mode),
    ]
    after: list[list[str]] = []
    if planned.mode == "slot":
        settings.append(("plugins.slots.memory", PLUGIN_ID))
        after.append(["openclaw", "plugins", "disable", "memory-core"])
    elif setup is not None and setup.memory_slot == PLUGIN_ID:
        settings.append(("plugins.slots.memory", "memory-core"))
        after.append(["openclaw", "plugins", "enable", "memory-core"])
    batch = json.dumps([{"path": path, "value": value} for path, value in settings], separators=(",", ":"))
    return [
        ["openclaw", "plugins", "install", "--link", planned.folder, "--force", "--accept-capabilities"],
        ["openclaw", "config", "set", "--batch-json", batch],
        *after,
    ]


def _last_lines(text: str, count: int = 3) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " / ".join(lines[-count:]) or "nothing"


def read_setup(env: Mapping[str, str]) -> OpenClawSetup | None:
    """OpenClaw's config as it concerns the plugin; None when there is no config file. Raises ``ConfigError``
    naming the file when it cannot be read."""
    _, path, _ = openclaw_paths(env)
    if not path.is_file():
        return None
    import json5  # OpenClaw's config is JSON5

    try:
        data = json5.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: OpenClaw's config cannot be read ({exc})") from None
    plugins = _table(_table(data).get("plugins"))
    entries = _table(plugins.get("entries"))
    entry = entries.get(PLUGIN_ID)
    slot = _table(plugins.get("slots")).get("memory")
    paths = _table(plugins.get("load")).get("paths")
    return OpenClawSetup(
        config_path=path,
        entry=entry if isinstance(entry, dict) else None,
        memory_slot=slot if isinstance(slot, str) else "memory-core",
        memory_core_enabled=_table(entries.get("memory-core")).get("enabled") is not False,
        load_paths=[Path(p).expanduser() for p in paths if isinstance(p, str)] if isinstance(paths, list) else [],
    )


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
