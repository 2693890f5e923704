"""``vaultsync init``: write the config and prepare a vault, never overwriting a person's file."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from vaultsync import config as configmod
from vaultsync.config import Config, ConfigError, Server
from vaultsync.fs import atomic_write
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import Author, ensure_repo

GITIGNORE_LINES = (".vaultsync/", ".trash/", ".obsidian/workspace*.json", "*.vstmp")
TEMPLATE_FILES = ("Entity.md", "Fact.md", "Daily.md")
DATE_TYPES = {
    "timestamp": "date",
    "updated": "date",
    "facts_active": "number",
    "facts_superseded": "number",
    "related": "multitext",
    "mentions": "multitext",
}


@dataclass
class InitResult:
    config_path: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    repo_created: bool = False
    commit: str | None = None
    token_created: bool = False
    token_path: Path | None = None


def make_token(path: Path) -> bool:
    """A random bearer token for the local API (32 bytes, URL-safe text) in a file only its owner can read.
    A token already there is kept: plugins hold it. False when it was there."""
    if path.exists():
        return False
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return True


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def check_roots(workspace: Path, life: Path, vault: Path) -> None:
    """The vault must be a folder of its own: syncing a tree into itself would feed on its own output."""
    for name, root in (("workspace", workspace), ("life", life)):
        if not root.is_dir():
            raise ConfigError(f"{root}: the {name} folder does not exist; create it or fix --{name}")
        if _overlap(vault, root):
            raise ConfigError(
                f"{vault}: the vault may not be inside, equal to, or a parent of the {name} folder {root}"
            )


def _template(name: str) -> bytes:
    return (resources.files("vaultsync") / "templates" / name).read_bytes()


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def init_vault(workspace: Path, life: Path, vault: Path, config_path: Path) -> InitResult:
    workspace, life, vault = (p.expanduser().resolve() for p in (workspace, life, vault))
    check_roots(workspace, life, vault)
    token = configmod.token_beside(config_path.expanduser().absolute())
    cfg = Config(workspace=workspace, life=life, vault=vault, server=Server(token_file=str(token)))
    text = configmod.dumps(cfg).encode()
    result = InitResult(config_path)
    if config_path.exists() and config_path.read_bytes() != text:
        raise ConfigError(f"{config_path}: a different config is already there; remove it or pass another --config")
    vault.mkdir(parents=True, exist_ok=True)
    if not config_path.exists():
        atomic_write(config_path, text)
    result.token_path = token
    result.token_created = make_token(token)

    wanted: dict[str, bytes] = {f"Templates/{n}": _template(n) for n in TEMPLATE_FILES}
    wanted["Memory.base"] = _template("Memory.base")
    wanted[".obsidian/daily-notes.json"] = _json(
        {"folder": cfg.layout.daily, "format": "YYYY-MM-DD", "template": "Templates/Daily"}
    )
    wanted[".obsidian/templates.json"] = _json({"folder": "Templates"})
    wanted[".obsidian/types.json"] = _json({"types": DATE_TYPES})
    for rel, data in wanted.items():
        target = vault / rel
        if target.exists():
            result.kept.append(rel)
        else:
            atomic_write(target, data, None)
            result.created.append(rel)

    ignore = vault / ".gitignore"
    existing = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    missing = [line for line in GITIGNORE_LINES if line not in existing.splitlines()]
    if missing:
        # Appending keeps every line the person wrote; vaultsync's state must never reach the repo.
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        atomic_write(ignore, (existing + prefix + "\n".join(missing) + "\n").encode(), existing.encode() or None)
        result.created.append(".gitignore")

    result.repo_created = ensure_repo(vault)
    repo = VaultRepo(vault)
    author = Author(cfg.git.agent_name, cfg.git.agent_email)
    result.commit = repo.commit(result.created, "vaultsync init: templates, Memory.base and Obsidian settings", author)
    return result


TOKEN_ENV = "VAULTSYNC_TOKEN"


def load_token(cfg: Config) -> str:
    """The API's bearer token: ``VAULTSYNC_TOKEN`` when set, else the token file ``init`` made."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    path = cfg.token_path
    try:
        token = path.read_text(encoding="ascii").strip() if path else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: cannot read the API token ({exc}); run `vaultsync init` or set {TOKEN_ENV}"
        ) from None
    if len(token) < 32:
        raise ConfigError(
            f"{path}: the API token is missing or shorter than 32 characters; set {TOKEN_ENV}, "
            "or remove the file and run `vaultsync init`"
        )
    return token
