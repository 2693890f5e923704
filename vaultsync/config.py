"""The one config file: where the three roots are, how the vault is laid out, who authors commits."""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from vaultsync.errors import ConfigError

STATE_DIRNAME = ".vaultsync"
_S = TypeVar("_S")


@dataclass(frozen=True)
class Layout:
    """Vault folder names. The defaults are the vault contract; people's Bases views depend on them."""

    projects: str = "1 Projects"
    areas: str = "2 Areas"
    resources: str = "3 Resources"
    archives: str = "4 Archives"
    daily: str = "Daily"
    agent: str = "agent"
    # Each fact note also carries its text as the property `text`, for Bases views to show (opt-in: notes then
    # hold the text twice; docs/vault-format.md says which place wins on an edit).
    fact_text_property: bool = False

    def as_json(self) -> str:
        """The layout as the base records it, to tell a changed setting from notes deleted by hand."""
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Layout | None:
        """The layout ``as_json`` wrote; None when the text is not one (a newer or damaged record)."""
        try:
            value = json.loads(text)
            return cls(**value) if isinstance(value, dict) else None
        except (ValueError, TypeError):
            return None

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
    """The bounds of the shrink guard (``core/shrink.py``, docs/safety.md): a pass holds a change past one."""

    max_delete_share: float = 0.25  # many deletions: more than this share of one side's units ...
    max_delete_count: int = 5  # ... and more than this many of them
    max_daily_deletes: int = 2  # more daily notes than this deleted on one side
    max_shrink_share: float = 0.5  # MEMORY.md, USER.md, a summary or an entity's facts losing more than this share
    min_lines: int = 4  # files and summaries shorter than this are never held for shrinking
    min_facts: int = 3  # entities with fewer facts than this are never held for losing them


@dataclass(frozen=True)
class Janitor:
    """How long tagged MEMORY.md sections live, how long daily notes stay, and the sizes the agent can load.

    The line limits are the conventions of the agent setups (HEARTBEAT.md is read every heartbeat, MEMORY.md every
    session); ``bootstrap_max_chars`` is the agent's per-file context limit, beyond which it sees a truncated file.
    """

    p1_days: int = 90
    p2_days: int = 30
    keep_daily_days: int = 0  # 0: daily notes stay in memory/ for ever
    heartbeat_max_lines: int = 50
    memory_max_lines: int = 500
    bootstrap_max_chars: int = 20000


@dataclass(frozen=True)
class Review:
    """Where the weekly review writes its note, which categories hold one active fact at a time, and the optional
    program that writes a summary from an entity's facts."""

    folder: str = "Reviews"
    single_valued: tuple[str, ...] = ("role", "employer", "location", "relationship-status")
    command: str = ""


@dataclass(frozen=True)
class Extract:
    """The program that proposes facts from new daily-note text (empty: ``vaultsync extract`` has nothing to run)."""

    command: str = ""


@dataclass(frozen=True)
class RemoteSettings:
    """The git remote a pass meets other devices through. Its URL lives in the vault repository's own git config
    (``git remote get-url``), where git's credential helpers and SSH keys already apply: vaultsync keeps none."""

    name: str = "origin"
    branch: str = "main"


@dataclass(frozen=True)
class Server:
    """The local API (``vaultsync serve``, ``vaultsync mcp``): where the bearer token is kept (made by ``init``,
    mode 0600, next to the config). Empty: ``<config name>.token`` beside the config file."""

    token_file: str = ""


@dataclass(frozen=True)
class Embeddings:
    """An embeddings endpoint the person runs (``[recall.embeddings]``), speaking the OpenAI-compatible
    ``/v1/embeddings`` API: recall's optional semantic re-ranker (docs/recall.md). Empty ``url``: off."""

    url: str = ""  # e.g. http://127.0.0.1:11434/v1/embeddings (Ollama)
    model: str = ""
    key_file: str = ""  # a file holding the bearer key, relative to the config file; empty: no key sent


@dataclass(frozen=True)
class Config:
    workspace: Path
    life: Path
    vault: Path
    layout: Layout = field(default_factory=Layout)
    git: GitSettings = field(default_factory=GitSettings)
    safety: Safety = field(default_factory=Safety)
    janitor: Janitor = field(default_factory=Janitor)
    review: Review = field(default_factory=Review)
    extract: Extract = field(default_factory=Extract)
    remote: RemoteSettings | None = None  # None: no [remote] table, so a pass neither fetches nor pushes
    server: Server = field(default_factory=Server)
    embeddings: Embeddings = field(default_factory=Embeddings)
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

    @property
    def embeddings_key(self) -> Path | None:
        """The embeddings endpoint's key file, relative to the config file; None when none is configured."""
        if not self.embeddings.key_file:
            return None
        here = self.source.parent if self.source else Path.cwd()
        return (here / Path(self.embeddings.key_file).expanduser()).resolve()


def token_beside(config: Path) -> Path:
    return config.with_name(config.stem + ".token")


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """--config wins, then VAULTSYNC_CONFIG, then the default in the user's config folder."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("VAULTSYNC_CONFIG")
    if env:
        return Path(env).expanduser()
    return default_config()


def _dirs() -> Any:
    """The XDG folders on Linux and macOS (``$XDG_CONFIG_HOME``, else ``~/.config``; the same for state), the
    system's own on Windows. macOS keeps the XDG ones because that is where the config has always been found."""
    import platformdirs
    from platformdirs.unix import Unix

    return platformdirs.PlatformDirs("vaultsync") if os.name == "nt" else Unix("vaultsync")


def default_config() -> Path:
    """``$XDG_CONFIG_HOME/vaultsync/config.toml``, so people who moved their config folder find the file there."""
    return Path(_dirs().user_config_path) / "config.toml"


def data_dir() -> Path:
    """The user's data folder (``$XDG_DATA_HOME/vaultsync``): files vaultsync installs for other programs to load,
    which must stay where they were put while the package itself is upgraded or moved."""
    return Path(_dirs().user_data_path)


def crash_dir() -> Path:
    """Where a crash's full traceback is written: the user's state folder (``$XDG_STATE_HOME/vaultsync``), never
    the vault or the memory, which a crash must not add files to."""
    return Path(_dirs().user_state_path) / "crash"


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
        if isinstance(default, tuple) and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = tuple(value)  # TOML has arrays, the frozen config keeps tuples
        if type(value) is not type(default):
            raise ConfigError(f"{where}.{key}: expected {type(default).__name__}, got {value!r}")
        values[key] = value
    return cls(**values)


def load(path: Path) -> Config:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no config file; create one with `vaultsync init`") from None
    except IsADirectoryError:
        raise ConfigError(
            f"{path}: is a folder, not a config file; give the file's path (e.g. {path / 'config.toml'})"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tables = ("paths", "vault", "git", "safety", "janitor", "review", "extract", "remote", "server", "recall")
    unknown = sorted(set(raw) - set(tables))
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {', '.join(unknown)}; expected {', '.join(tables)}")
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
    overlap = overlapping_roots(roots["workspace"], roots["life"], roots["vault"])
    if overlap:
        raise ConfigError(f"{path}: {overlap}")
    layout = _section(Layout, raw.get("vault"), f"{path}: [vault]")
    safety = _section(Safety, raw.get("safety"), f"{path}: [safety]")
    for share in ("max_delete_share", "max_shrink_share"):
        if not 0 <= getattr(safety, share) <= 1:
            raise ConfigError(f"{path}: [safety].{share} must be between 0 and 1")
    janitor = _section(Janitor, raw.get("janitor"), f"{path}: [janitor]")
    negative = [f.name for f in fields(janitor) if getattr(janitor, f.name) < 0]
    if negative:
        raise ConfigError(f"{path}: [janitor].{negative[0]} must be 0 or more")
    remote = None
    if "remote" in raw:
        remote = _section(RemoteSettings, raw["remote"], f"{path}: [remote]")
        for key in ("name", "branch"):
            if not _ref_safe(getattr(remote, key)):
                raise ConfigError(f"{path}: [remote].{key} must be a plain git name, got {getattr(remote, key)!r}")
    return Config(
        workspace=roots["workspace"],
        life=roots["life"],
        vault=roots["vault"],
        layout=layout,
        git=_section(GitSettings, raw.get("git"), f"{path}: [git]"),
        safety=safety,
        janitor=janitor,
        review=_section(Review, raw.get("review"), f"{path}: [review]"),
        extract=_section(Extract, raw.get("extract"), f"{path}: [extract]"),
        remote=remote,
        server=_section(Server, raw.get("server"), f"{path}: [server]"),
        embeddings=_embeddings(raw.get("recall"), path),
        source=path,
    )


def _embeddings(recall: object, path: Path) -> Embeddings:
    """``[recall.embeddings]``; ``[recall]`` holds nothing else yet."""
    if recall is None:
        return Embeddings()
    if not isinstance(recall, dict):
        raise ConfigError(f"{path}: [recall]: expected a table")
    unknown = sorted(set(recall) - {"embeddings"})
    if unknown:
        raise ConfigError(f"{path}: [recall]: unknown key(s) {', '.join(unknown)}; expected [recall.embeddings]")
    found = _section(Embeddings, recall.get("embeddings"), f"{path}: [recall.embeddings]")
    if found.url and not found.url.startswith(("http://", "https://")):
        raise ConfigError(f"{path}: [recall.embeddings].url must start with http:// or https://, got {found.url!r}")
    if found.url and not found.model:
        raise ConfigError(f"{path}: [recall.embeddings].model is empty; name the endpoint's model (nomic-embed-text)")
    return found


def _ref_safe(name: str) -> bool:
    """A remote or branch name git accepts and that cannot be read as an option or a path trick."""
    return (
        bool(name)
        and not name.startswith(("-", "/"))
        and ".." not in name
        and not any(c in name for c in " ~^:?*[\\\t\n")
    )


def _overlap(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def overlapping_roots(workspace: Path, life: Path, vault: Path) -> str:
    """Why these three roots cannot be synced together, or "" when they can (paths already resolved).

    A vault inside, equal to or holding a memory root would mirror its own notes deeper on every pass; a life
    folder inside or equal to the workspace's ``memory/``, or a ``memory/`` inside a PARA folder of life, gives
    each file two notes, and conflicting edits to the two lose one. ``init`` and every pass check the same.
    """
    for name, root in (("workspace", workspace), ("life", life)):
        if _overlap(vault, root):
            return (
                f"the vault {vault} may not be inside, equal to, or a parent of the {name} folder {root}: it would "
                "sync its own notes into itself; give the vault a folder of its own"
            )
    memory = workspace / "memory"
    paras = [life / para for para in ("projects", "areas", "resources", "archives")]
    if life == memory or memory in life.parents or any(p == memory or p in memory.parents for p in paras):
        return (
            f"the life folder {life} and the workspace's memory folder {memory} overlap: every file in both would "
            "be synced twice; move one out of the other and point [paths] at the new place"
        )
    return ""


def _toml_value(value: object) -> str:
    # JSON string and number syntax is a subset of TOML's, which spares a TOML-writing dependency.
    return json.dumps(value, ensure_ascii=False)


def dumps(config: Config) -> str:
    lines = ["# vaultsync configuration; see docs/cli.md", "", "[paths]"]
    for key in ("workspace", "life", "vault"):
        lines.append(f"{key} = {_toml_value(str(getattr(config, key)))}")
    sections = (
        ("vault", config.layout),
        ("git", config.git),
        ("safety", config.safety),
        ("janitor", config.janitor),
        ("review", config.review),
        ("extract", config.extract),
        ("server", config.server),
    )
    for title, section in sections:
        lines += ["", f"[{title}]"]
        lines += [f"{f.name} = {_toml_value(getattr(section, f.name))}" for f in fields(section)]
    if config.embeddings.url:
        lines += ["", "[recall.embeddings]"]
        lines += [f"{f.name} = {_toml_value(getattr(config.embeddings, f.name))}" for f in fields(config.embeddings)]
    if config.remote is not None:
        lines += ["", "[remote]"]
        lines += [f"{f.name} = {_toml_value(getattr(config.remote, f.name))}" for f in fields(config.remote)]
    return "\n".join(lines) + "\n"
