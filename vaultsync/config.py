"""The one config file: where the three roots are, how the vault is laid out, who authors commits."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

DEFAULT_CONFIG = Path("~/.config/vaultsync/config.toml")
STATE_DIRNAME = ".vaultsync"
_S = TypeVar("_S")


class ConfigError(ValueError):
    """The config is missing or invalid; the message names the file and the fix."""


@dataclass(frozen=True)
class Layout:
    """Vault folder names. The defaults are the vault contract; people's Bases views depend on them."""

    projects: str = "1 Projects"
    areas: str = "2 Areas"
    resources: str = "3 Resources"
    archives: str = "4 Archives"
    daily: str = "Daily"
    agent: str = "agent"

    def para_folders(self) -> dict[str, str]:
        """Memory-side PARA folder name -> vault folder name."""
        return {
            "projects": self.projects,
            "areas": self.areas,
            "resources": self.resources,
            "archives": self.archives,
        }


@dataclass(frozen=True)
class GitSettings:
    """Commit authors. Empty person fields fall back to git's own user, then to a fixed name."""

    agent_name: str = "vaultsync agent"
    agent_email: str = "agent@vaultsync.invalid"
    person_name: str = ""
    person_email: str = ""


@dataclass(frozen=True)
class Safety:
    max_delete_share: float = 0.25
    max_delete_count: int = 5


@dataclass(frozen=True)
class Server:
    """The local API (``vaultsync serve``, ``vaultsync mcp``): where the bearer token is kept (made by ``init``,
    mode 0600, next to the config). Empty: ``<config name>.token`` beside the config file."""

    token_file: str = ""


@dataclass(frozen=True)
class Config:
    workspace: Path
    life: Path
    vault: Path
    layout: Layout = field(default_factory=Layout)
    git: GitSettings = field(default_factory=GitSettings)
    safety: Safety = field(default_factory=Safety)
    server: Server = field(default_factory=Server)
    source: Path | None = None

    @property
    def state_dir(self) -> Path:
        return self.vault / STATE_DIRNAME

    @property
    def token_path(self) -> Path | None:
        """The token file: the configured one (relative to the config file), else beside the config."""
        if self.server.token_file:
            here = self.source.parent if self.source else Path.cwd()
            return (here / Path(self.server.token_file).expanduser()).resolve()
        return token_beside(self.source) if self.source else None


def token_beside(config: Path) -> Path:
    return config.with_name(config.stem + ".token")


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """--config wins, then VAULTSYNC_CONFIG, then the default under ~/.config."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("VAULTSYNC_CONFIG")
    if env:
        return Path(env).expanduser()
    return DEFAULT_CONFIG.expanduser()


def _section(cls: type[_S], data: object, where: str) -> _S:
    if data is None:
        return cls()
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a table")
    known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        default = getattr(cls(), key)
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not type(default):
            raise ConfigError(f"{where}.{key}: expected {type(default).__name__}, got {value!r}")
        values[key] = value
    return cls(**values)


def load(path: Path) -> Config:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no config file; create one with `vaultsync init`") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"paths", "vault", "git", "safety", "server"})
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {', '.join(unknown)}; expected paths, vault, git, safety, server")
    paths = raw.get("paths")
    if not isinstance(paths, dict):
        raise ConfigError(f"{path}: missing [paths] table with workspace, life and vault")
    roots = {}
    for key in ("workspace", "life", "vault"):
        value = paths.get(key)
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{path}: [paths].{key} must be a path")
        # A relative path means relative to the config file, not to wherever cron starts.
        roots[key] = (path.parent / Path(value).expanduser()).resolve()
    layout = _section(Layout, raw.get("vault"), f"{path}: [vault]")
    safety = _section(Safety, raw.get("safety"), f"{path}: [safety]")
    if not 0 <= safety.max_delete_share <= 1:
        raise ConfigError(f"{path}: [safety].max_delete_share must be between 0 and 1")
    return Config(
        workspace=roots["workspace"],
        life=roots["life"],
        vault=roots["vault"],
        layout=layout,
        git=_section(GitSettings, raw.get("git"), f"{path}: [git]"),
        safety=safety,
        server=_section(Server, raw.get("server"), f"{path}: [server]"),
        source=path,
    )


def _toml_value(value: object) -> str:
    # JSON string and number syntax is a subset of TOML's, which spares a TOML-writing dependency.
    return json.dumps(value, ensure_ascii=False)


def dumps(config: Config) -> str:
    lines = ["# vaultsync configuration; see docs/cli.md", "", "[paths]"]
    for key in ("workspace", "life", "vault"):
        lines.append(f"{key} = {_toml_value(str(getattr(config, key)))}")
    for title, section in (
        ("vault", config.layout),
        ("git", config.git),
        ("safety", config.safety),
        ("server", config.server),
    ):
        lines += ["", f"[{title}]"]
        lines += [f"{f.name} = {_toml_value(getattr(section, f.name))}" for f in fields(section)]
    return "\n".join(lines) + "\n"
