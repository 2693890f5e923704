"""``vaultsync obsidian install``: put the built vault plugin into the vault and point it at the local API.

The plugin's built files (``main.js``, ``manifest.json``, ``styles.css``) ship inside the Python package, in
``vaultsync/obsidian_plugin/``, where the plugin's build writes them (docs/architecture.md says why). Installing
copies them into ``<vault>/<config folder>/plugins/<id>/`` and writes the plugin's ``data.json`` with the API's
address and token, keeping any other setting the person changed there. The token must never reach the vault's
repository, nor a remote, so the plugin's folder is git-ignored and that line committed as the agent. The
copies are made under the run lock, through the write path, like every other write to the vault.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.errors import ConfigError, NotBuilt
from vaultsync.model import AGENT
from vaultsync.system.fs import atomic_write
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["DEFAULT_URL", "Installed", "NotBuilt", "install", "shipped"]

DEFAULT_URL = "http://127.0.0.1:8765"
REQUIRED = ("main.js", "manifest.json")
OPTIONAL = ("styles.css",)


@dataclass
class Installed:
    folder: str  # vault-relative
    files: list[str] = field(default_factory=list)
    version: str = ""
    ignored: bool = False  # the .gitignore line was added now
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "files": self.files,
            "version": self.version,
            "ignored": self.ignored,
            "commit": self.commit,
        }


def shipped() -> Path:
    """Where the package keeps the built plugin."""
    return Path(str(resources.files("vaultsync") / "obsidian_plugin"))


def install(
    cfg: Config, token: str, *, url: str = DEFAULT_URL, config_dir: str = ".obsidian", source: Path | None = None
) -> Installed:
    """Copy the plugin into the vault, write its settings, git-ignore its folder. Running it again updates the
    files and the address and token, and keeps the person's other settings."""
    source = source or shipped()
    missing = [name for name in REQUIRED if not (source / name).is_file()]
    if missing:
        raise NotBuilt(
            f"{source}: no built plugin ({', '.join(missing)} missing); build it with `npm ci && npm run build` "
            "in plugins/obsidian of a source checkout, or pass --from with the folder holding main.js"
        )
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"--url {url!r}: expected the API's address, e.g. {DEFAULT_URL}")
    if not config_dir or "/" in config_dir or "\\" in config_dir or config_dir in (".", ".."):
        raise ConfigError(f"--config-dir {config_dir!r}: expected the name of the vault's settings folder")
    manifest = _manifest(source / "manifest.json")
    rel = f"{config_dir}/plugins/{manifest['id']}"
    done = Installed(rel, version=str(manifest.get("version", "")))

    def copy() -> OwnWrites:
        """Under the run lock: the plugin's files, its settings, and the .gitignore line committed as the agent."""
        target = cfg.vault / rel
        target.mkdir(parents=True, exist_ok=True)
        for name in REQUIRED + OPTIONAL:
            if (source / name).is_file():
                atomic_write(target / name, (source / name).read_bytes())
                done.files.append(f"{rel}/{name}")
        data = target / "data.json"
        settings = _settings(data)
        settings.update(baseUrl=url.rstrip("/"), token=token)
        atomic_write(data, (json.dumps(settings, indent=2) + "\n").encode())
        os.chmod(data, 0o600)
        done.files.append(f"{rel}/data.json")
        done.ignored = _ignore(cfg.vault, f"{rel}/")
        subject = "vaultsync obsidian install: keep the plugin's settings out of git"
        return OwnWrites(done.ignored, commit=(".gitignore",) if done.ignored else (), subject=subject)

    report = write(replace(cfg, remote=None), WriteRequest("obsidian-install", AGENT, apply=copy, run_pass=False))
    done.commit = report.commits[-1] if report.commits else None
    return done


def _manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotBuilt(f"{path}: cannot read the plugin's manifest ({exc}); build the plugin again") from None
    plugin_id = manifest.get("id") if isinstance(manifest, dict) else None
    if not isinstance(plugin_id, str) or not plugin_id or "/" in plugin_id or plugin_id.startswith("."):
        raise NotBuilt(f"{path}: the manifest names no usable plugin id; build the plugin again")
    return manifest


def _settings(path: Path) -> dict[str, Any]:
    """The plugin's saved settings; unreadable ones are replaced, since they hold nothing but these two."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _ignore(vault: Path, line: str) -> bool:
    """Append ``line`` to the vault's .gitignore unless it is there; True when it was added."""
    ignore = vault / ".gitignore"
    existing = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if line in existing.splitlines():
        return False
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    atomic_write(ignore, (existing + prefix + line + "\n").encode(), existing.encode() or None)
    return True
