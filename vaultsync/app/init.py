"""``vaultsync init``: write the config and prepare a vault, never overwriting a person's file."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from vaultsync import config as configmod
from vaultsync.app.adopt import TYPES, Adopted, check_settings, merge_types
from vaultsync.app.discover import life_of
from vaultsync.config import Config, Layout, RemoteSettings, Server, overlapping_roots
from vaultsync.errors import ConfigError, NotARepository, UntrustedRepository
from vaultsync.git import remote as gitremote
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import GitFailed, ensure_repo, git_dir
from vaultsync.model import AGENT, PERSON, Actor
from vaultsync.system.fs import atomic_write
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

GITIGNORE_LINES = (".vaultsync/", ".trash/", ".obsidian/workspace*.json", "*.vstmp")
TEMPLATE_FILES = ("Entity.md", "Fact.md", "Daily.md")
# `timestamp` is a datetime: a fact stamped with a time keeps it when edited with Obsidian's picker, and a bare
# date shows as that day. `updated` is the day of the newest fact, a date by definition.
PROPERTY_TYPES = {
    "timestamp": "datetime",
    "updated": "date",
    "facts_active": "number",
    "facts_superseded": "number",
    "related": "multitext",
    "mentions": "multitext",
}


@dataclass
class InitResult:
    config_path: Path
    life_created: Path | None = None  # the life folder, made now because it was missing
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # a file of the person's that init added to (types.json)
    repo_created: bool = False
    cloned: bool = False
    remote_added: bool = False
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # something the person may want to turn on
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


def check_roots(workspace: Path, life: Path, vault: Path) -> list[str]:
    """The workspace must exist, the life folder be a folder or missing (init makes it), and the roots not overlap
    (``overlapping_roots``, the check every pass makes too); returns warnings about a layout that works but
    surprises: a life folder inside the workspace other than its own ``life/``, where OpenClaw-style agents keep it."""
    if not workspace.is_dir():
        raise ConfigError(f"{workspace}: the workspace folder does not exist; create it or fix --workspace")
    if life.exists() and not life.is_dir():
        raise ConfigError(f"{life}: the life folder is a file, not a folder; fix --life")
    overlap = overlapping_roots(workspace, life, vault)
    if overlap:
        raise ConfigError(overlap)
    if workspace in life.parents and life != life_of(workspace):
        return [
            f"the life folder {life} is inside the workspace {workspace}: that works (a pass reads only MEMORY.md, "
            "HEARTBEAT.md and memory/ there), but keep it out of memory/, where its files would be synced twice"
        ]
    return []


def _template(name: str) -> bytes:
    return (resources.files("vaultsync") / "templates" / name).read_bytes()


def _dashboard(text: bool) -> bytes:
    """``Memory.base``, with a column of the fact texts when the notes carry them as a property."""
    base = _template("Memory.base")
    return base.replace(b"      - file.name\n", b"      - file.name\n      - text\n") if text else base


def _has_notes(vault: Path) -> bool:
    """Whether the vault already holds a note of the person's (outside hidden folders and ``Templates/``)."""
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (folder == str(vault) and d == "Templates")]
        if any(name.endswith(".md") for name in files):
            return True
    return False


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def init_vault(
    workspace: Path,
    life: Path,
    vault: Path,
    config_path: Path,
    remote_url: str | None = None,
    clone_url: str | None = None,
    fact_text: bool | None = None,
) -> InitResult:
    """Write the config and prepare the vault. ``remote_url`` adds a git remote to the vault's repository;
    ``clone_url`` starts the vault as a clone of an existing one (a vault that is missing or empty).
    ``fact_text``: ``[vault] fact_text_property``; None turns it on for a new vault only."""
    workspace, life, vault = (p.expanduser().resolve() for p in (workspace, life, vault))
    warnings = check_roots(workspace, life, vault)
    _trusted(vault)
    remote = RemoteSettings() if remote_url or clone_url else None
    token = configmod.token_beside(config_path.expanduser().absolute())
    cfg, text = _choose_config(workspace, life, vault, config_path, remote, token, clone_url, fact_text)
    result = InitResult(config_path, warnings=warnings)
    if not cfg.layout.fact_text_property:
        result.notes.append(
            f"Bases views do not show the fact text in this vault; to add it, set fact_text_property = true under "
            f"[vault] in {config_path} (the next pass then rewrites each fact note once)"
        )
    if clone_url and remote:
        _clone(clone_url, vault, remote)
        result.cloned = True
    vault.mkdir(parents=True, exist_ok=True)
    if not life.exists():
        life.mkdir(parents=True)
        result.life_created = life
    if not config_path.exists():
        atomic_write(config_path, text)
    result.token_path = token
    result.token_created = make_token(token)
    _prepare_vault(cfg, remote_url, remote, result)
    return result


def _trusted(vault: Path) -> None:
    """UntrustedRepository, before anything is written, when git refuses the vault's repository for its owner:
    making one would not help, and only the person can tell git to trust it."""
    if not vault.is_dir():
        return
    try:
        git_dir(vault)
    except UntrustedRepository:
        raise
    except NotARepository:
        pass  # init makes it


def _choose_config(
    workspace: Path,
    life: Path,
    vault: Path,
    config_path: Path,
    remote: RemoteSettings | None,
    token: Path,
    clone_url: str | None,
    fact_text: bool | None,
) -> tuple[Config, bytes]:
    """The config init stands for and the text it writes when none is there yet. A config already there is
    kept when it is what init would write (with the fact text on or off, whichever the person chose), so init
    can run again; any other raises before anything is written."""
    # A new vault shows each fact's text in Bases views from its first note; an existing one is only told how,
    # since turning it on rewrites every fact note once.
    fresh = (not clone_url and not _has_notes(vault)) if fact_text is None else fact_text
    made = {
        shown: Config(
            workspace=workspace,
            life=life,
            vault=vault,
            layout=Layout(fact_text_property=shown),
            remote=remote,
            server=Server(token_file=str(token)),
        )
        for shown in (True, False)
    }
    cfg = made[fresh]
    text = configmod.dumps(cfg).encode()
    if config_path.exists():
        there = config_path.read_bytes()
        found = next((c for c in made.values() if configmod.dumps(c).encode() == there), None)
        if found is None:
            raise ConfigError(f"{config_path}: a different config is already there; remove it or pass another --config")
        cfg = found
    return cfg, text


def _clone(clone_url: str, vault: Path, remote: RemoteSettings) -> None:
    """Start the vault as a clone; only into a folder that is missing or empty, so no note is ever mixed in."""
    if vault.exists() and any(vault.iterdir()):
        raise ConfigError(f"{vault}: --clone needs a vault folder that is missing or empty")
    try:
        gitremote.clone(clone_url, vault, remote.name, remote.branch)
    except (gitremote.Unreachable, GitFailed) as exc:
        raise ConfigError(f"{vault}: {exc}; check the URL and that git can reach it") from None


def _obsidian_files(cfg: Config) -> dict[str, bytes]:
    """The templates, the dashboard and the Obsidian settings a vault starts with, by path in the vault."""
    wanted: dict[str, bytes] = {f"Templates/{n}": _template(n) for n in TEMPLATE_FILES}
    wanted["Memory.base"] = _dashboard(cfg.layout.fact_text_property)
    wanted[".obsidian/daily-notes.json"] = _json(
        {"folder": cfg.layout.daily, "format": "YYYY-MM-DD", "template": "Templates/Daily"}
    )
    wanted[".obsidian/templates.json"] = _json({"folder": "Templates"})
    wanted[".obsidian/types.json"] = _json({"types": PROPERTY_TYPES})
    return wanted


def _prepare_obsidian(vault: Path, cfg: Config, result: InitResult) -> None:
    """Write each starting file the vault lacks and keep the person's own; only types.json is added to, since
    the notes' property types depend on it."""
    adopted = Adopted()
    for rel, data in _obsidian_files(cfg).items():
        target = vault / rel
        if target.exists() and rel == TYPES:
            merge_types(vault, PROPERTY_TYPES, adopted)
            if TYPES not in adopted.updated:
                result.kept.append(rel)
        elif target.exists():
            result.kept.append(rel)
        else:
            atomic_write(target, data, None)
            result.created.append(rel)
    check_settings(vault, cfg.layout.daily, adopted)
    result.updated = adopted.updated
    result.warnings += adopted.warnings


def _ignore_state(vault: Path, result: InitResult) -> None:
    """Add the lines that keep vaultsync's state out of the repository to ``.gitignore``."""
    ignore = vault / ".gitignore"
    existing = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    missing = [line for line in GITIGNORE_LINES if line not in existing.splitlines()]
    if missing:
        # Appending keeps every line the person wrote; vaultsync's state must never reach the repo.
        prefix = "" if not existing or existing.endswith("\n") else "\n"
        atomic_write(ignore, (existing + prefix + "\n".join(missing) + "\n").encode(), existing.encode() or None)
        result.created.append(".gitignore")


def _open_repo(vault: Path, remote_url: str | None, remote: RemoteSettings | None, result: InitResult) -> VaultRepo:
    """The vault's repository, made when missing, with the remote added when one was asked for."""
    result.repo_created = ensure_repo(vault)
    repo = VaultRepo(vault)
    if remote_url and remote:
        try:
            result.remote_added = gitremote.add_remote(repo.git, remote.name, remote_url)
        except GitFailed as exc:
            raise ConfigError(f"{vault}: {exc.stderr}; change it with `git remote set-url`, or pass --config") from None
    return repo


def _prepare_vault(cfg: Config, remote_url: str | None, remote: RemoteSettings | None, result: InitResult) -> None:
    """Write the vault's starting files and make its repository under the run lock, through the write path,
    then commit what init found and what it wrote, each as whoever wrote it.

    The clone (``--clone``) comes before, outside the lock: git clones only into an empty folder, and the lock
    lives in the vault's ``.vaultsync/``. Locally only: the first sync pushes the commits."""
    local = replace(cfg, remote=None)

    def prepare() -> OwnWrites:
        _prepare_obsidian(cfg.vault, cfg, result)
        _ignore_state(cfg.vault, result)
        repo = _open_repo(cfg.vault, remote_url, remote, result)
        # The person's notes (a vault adopted into a new repository) and the settings file of theirs init added
        # to are committed as the person, before vaultsync's own files as the agent: nothing of theirs stays
        # untracked, and git says who wrote what.
        theirs = (repo.untracked() - set(result.created) if result.repo_created else set()) | set(result.updated)
        return _commit_only(sorted(theirs), "vaultsync init: the vault as it was before vaultsync")()

    _write(local, PERSON, prepare, result)
    if result.created:
        subject = "vaultsync init: templates, Memory.base and Obsidian settings"
        _write(local, AGENT, _commit_only(result.created, subject), result)


def _write(cfg: Config, actor: Actor, apply: Callable[[], OwnWrites], result: InitResult) -> None:
    done = write(cfg, WriteRequest("init", actor, apply=apply, run_pass=False))
    result.warnings += [p.line() for p in done.problems]
    result.commit = done.commits[-1] if done.commits else result.commit


def _commit_only(paths: list[str], subject: str) -> Callable[[], OwnWrites]:
    """A change that writes nothing more and commits ``paths``, already written."""
    return lambda: OwnWrites(bool(paths), commit=tuple(paths), subject=subject)


TOKEN_ENV = "VAULTSYNC_TOKEN"


def load_token(cfg: Config) -> str:
    """The API's bearer token: ``VAULTSYNC_TOKEN`` when set, else the token file ``init`` made."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        if len(token) < 32:
            raise ConfigError(
                f"{TOKEN_ENV} is shorter than 32 characters, too easy to guess; set a longer one (e.g. "
                "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`) or unset it to use the token file"
            )
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
