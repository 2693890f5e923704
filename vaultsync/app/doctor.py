"""``vaultsync doctor``: every link from the config to the plugins, checked in the order a pass and a plugin need
them, each ok or the problem and the one command that fixes it.

A link that fails leaves the links that stand on it unchecked (``skip``, saying which), so the first ``fail`` is
the one to fix first. OpenClaw neither configured nor on PATH is ``skip`` too: a machine that runs no agent is
not broken; its plugin's line reads OpenClaw's config file, so it costs no start of ``openclaw``. Nothing
here writes, and nothing waits long: the remote gets ``PROBE_SECONDS``, the API a few seconds.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vaultsync import __version__
from vaultsync import config as configmod
from vaultsync.app import openclaw, schedule, service
from vaultsync.app.init import load_token
from vaultsync.app.obsidian import DEFAULT_URL, shipped
from vaultsync.config import Config
from vaultsync.errors import ConfigError, NotARepository, UntrustedRepository
from vaultsync.git.remote import Remote, Unreachable
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import GitFailed, git_version
from vaultsync.state import runs
from vaultsync.system import services

PLUGIN_ID = "vaultsync"  # the vault plugin's folder under .obsidian/plugins
OPENCLAW_ENTRY = "plugins.entries.vaultsync-memory"
OPENCLAW_FIX = "vaultsync openclaw install"
ENABLE_FIX = "openclaw plugins enable vaultsync-memory"
FAILED_EXITS = {2: "a usage or config error", 4: "a safety stop", 70: "a crash"}


@dataclass
class Check:
    name: str
    status: str  # ok, fail or skip
    detail: str
    fix: str = ""


@dataclass
class Diagnosis:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(c.status == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}

    def add(self, name: str, status: str, detail: str, fix: str = "") -> bool:
        self.checks.append(Check(name, status, detail, fix))
        return status != "fail"


def diagnose(config_path: Path, url: str | None = None) -> Diagnosis:
    found = Diagnosis()
    config = schedule.absolute_config(config_path)
    cfg = _config(config, found)
    ready = cfg is not None and _roots(cfg, found) and _repository(cfg, found)
    if cfg is not None and ready:
        _remote(cfg, found)
        _schedule(config, cfg, found)
    else:
        for name in ("remote", "schedule"):
            found.add(name, "skip", "needs the links above")
    url = (url or (_obsidian_url(cfg) if cfg else None) or DEFAULT_URL).rstrip("/")
    token = _serve(config, cfg, url, found) if cfg else None
    if cfg is None:
        found.add("serve", "skip", "needs the config")
    _openclaw(cfg, url, found)
    if cfg is not None and ready:
        _obsidian(cfg, url, token, found)
    else:
        found.add("obsidian", "skip", "needs the links above")
    _versions(found)
    return found


def _init_line(cfg: Config, config: Path) -> str:
    paths = ["--workspace", str(cfg.workspace), "--life", str(cfg.life), "--vault", str(cfg.vault)]
    return shlex.join(["vaultsync", "init", *paths, "--config", str(config)])


def _config(config: Path, found: Diagnosis) -> Config | None:
    try:
        cfg = configmod.load(config)
    except ConfigError as exc:
        missing = not config.exists()
        found.add(
            "config",
            "fail",
            f"no config at {config}" if missing else str(exc),
            "vaultsync init" if missing else f"edit {config} (docs/cli.md: The config file)",
        )
        return None
    found.add("config", "ok", str(config))
    return cfg


def _roots(cfg: Config, found: Diagnosis) -> bool:
    for name, root in (("workspace", cfg.workspace), ("life", cfg.life), ("vault", cfg.vault)):
        try:
            next(iter(root.iterdir()), None)
        except OSError as exc:
            fix = f"mkdir -p {shlex.quote(str(root))}" if name == "life" else f"mount or restore {root}"
            return found.add("roots", "fail", f"the {name} folder {root} cannot be read ({exc.strerror or exc})", fix)
    return found.add("roots", "ok", f"workspace {cfg.workspace}, life {cfg.life}, vault {cfg.vault} readable")


def _repository(cfg: Config, found: Diagnosis) -> bool:
    if shutil.which("git") is None:
        return found.add("git", "fail", "git is not on PATH", "install git (Debian, Ubuntu: apt-get install git)")
    vault = shlex.quote(str(cfg.vault))
    try:
        repo = VaultRepo(cfg.vault)
    except UntrustedRepository as exc:
        what = f"git refuses the vault's repository {cfg.vault}: {exc.said} (another user owns it)"
        return found.add("git", "fail", what, exc.fix)
    except NotARepository:
        return found.add(
            "git", "fail", f"the vault {cfg.vault} is not a git repository", f"git -C {vault} init -b main"
        )
    busy = repo.busy()
    if busy:
        return found.add("git", "fail", busy, f"git -C {vault} status")
    return found.add("git", "ok", f"the vault is a git repository ({'.'.join(map(str, git_version()))})")


def _remote(cfg: Config, found: Diagnosis) -> None:
    if cfg.remote is None:
        found.add("remote", "ok", "none: a local vault (docs/remote.md adds one)")
        return
    repo = VaultRepo(cfg.vault)
    remote = Remote(repo.git, cfg.remote.name, cfg.remote.branch)
    vault = shlex.quote(str(cfg.vault))
    try:
        remote.probe()
    except Unreachable as exc:
        others = [n for n in repo.git.text("remote").split() if n != cfg.remote.name]
        if "has no remote named" in str(exc):
            fix = (
                f"git -C {vault} remote rename {others[0]} {cfg.remote.name}"
                if len(others) == 1
                else f"git -C {vault} remote add {cfg.remote.name} URL"
            )
        else:
            fix = f"git -C {vault} ls-remote {cfg.remote.name} (then fix the URL, the network or the credentials)"
        found.add("remote", "fail", str(exc), fix)
        return
    except GitFailed as exc:
        found.add("remote", "fail", exc.stderr.strip(), f"git -C {vault} remote -v")
        return
    found.add("remote", "ok", f"{remote.label} reachable")


def _schedule(config: Path, cfg: Config, found: Diagnosis) -> None:
    owned = service.installed(config)
    watching = any(unit.mode == "watch" for unit in owned)
    planned = schedule.status(config, cfg)
    if not watching and planned.interval is None:  # the schedule's interval is its sync job's
        found.add("schedule", "fail", "nothing runs the pass by itself", "vaultsync schedule install")
        return
    who = "the service (watch and the hourly pass)" if watching else "the schedule"
    last = runs.last(cfg.state_dir)
    if last is None:
        found.add("schedule", "ok", f"the pass is run by {who}; no run recorded yet")
    elif planned.stale:
        found.add(
            "schedule", "fail", "the last pass that ran to its end is older than twice the interval", "vaultsync sync"
        )
    elif last.exit_code in FAILED_EXITS:
        found.add(
            "schedule",
            "fail",
            f"the last run ({last.at}) ended in {FAILED_EXITS[last.exit_code]}: {last.summary}",
            "vaultsync sync",
        )
    else:
        found.add("schedule", "ok", f"the pass is run by {who}; last run {last.at}, exit {last.exit_code}")


def _obsidian_url(cfg: Config) -> str | None:
    data = _json(cfg.vault / ".obsidian" / "plugins" / PLUGIN_ID / "data.json")
    value = data.get("baseUrl") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.startswith("http") else None


def _serve(config: Path, cfg: Config, url: str, found: Diagnosis) -> str | None:
    """The API: its token readable, something answering at ``url``, and answering to that token."""
    try:
        token = load_token(cfg)
    except ConfigError as exc:
        found.add("serve", "fail", str(exc), _init_line(cfg, config))
        return None
    health = services.http_get(f"{url}/health")
    if health.code != 200:
        up = service.status(config)
        why = f"; the service is installed but down: {up.last_error}" if up.installed and up.last_error else ""
        found.add(
            "serve",
            "fail",
            f"{health.out if health.code == 0 else f'{url}/health: {health.code}'}{why}",
            "vaultsync service install",
        )
        return token
    answer = services.http_get(f"{url}/status", token)
    if answer.code == 401:
        found.add(
            "serve",
            "fail",
            f"{url} answers but refuses the token in {cfg.token_path} (it was started with another one)",
            "vaultsync service restart",
        )
        return token
    up = service.status(config)
    kept = "kept running by the service" if up.up else "not kept running by a service (vaultsync service install)"
    found.add("serve", "ok" if answer.code == 200 else "fail", f"{url} answers with the token; {kept}")
    return token


def _openclaw(cfg: Config | None, url: str, found: Diagnosis) -> None:
    """The plugin as OpenClaw's config file has it: read, not asked of ``openclaw``, which takes seconds to start."""
    try:
        setup = openclaw.read_setup(os.environ)
    except ConfigError as exc:
        found.add("openclaw", "fail", str(exc), "openclaw doctor")
        return
    if setup is None or setup.entry is None:
        if setup is None and shutil.which("openclaw") is None:
            found.add("openclaw", "skip", "not installed (openclaw is not on PATH)")
        else:
            where = f" ({setup.config_path})" if setup else ""
            found.add("openclaw", "fail", f"the vaultsync-memory plugin is not set up in OpenClaw{where}", OPENCLAW_FIX)
        return
    entry = setup.entry
    if entry.get("enabled") is False:
        found.add("openclaw", "fail", "the vaultsync-memory plugin is disabled", ENABLE_FIX)
        return
    settings = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    mode = settings.get("mode") if settings.get("mode") in openclaw.MODES else "supplement"
    fix = OPENCLAW_FIX + (" --mode slot" if mode == "slot" else "")
    wrong = _openclaw_wrong(cfg, url, setup, mode)
    if wrong:
        found.add("openclaw", "fail", "; ".join(wrong), fix)
    else:
        found.add("openclaw", "ok", f"vaultsync-memory installed in {mode} mode, pointing at {url}")


def _openclaw_wrong(cfg: Config | None, url: str, setup: openclaw.OpenClawSetup, mode: str) -> list[str]:
    """What keeps the installed plugin from working with this vaultsync, each said in a few words."""
    entry = setup.entry or {}
    wrong = []
    ours = [p for p in setup.load_paths if _plugin_id(p) == openclaw.PLUGIN_ID]
    if not ours:
        wrong.append("OpenClaw loads no copy of the plugin this vaultsync ships")
    elif not any(_same(p / "index.js", openclaw.shipped() / "index.js") for p in ours):
        wrong.append(f"the plugin in {ours[0]} is not the one this vaultsync ships")
    hooks = entry.get("hooks") if isinstance(entry.get("hooks"), dict) else {}
    if hooks.get("allowConversationAccess") is not True:
        wrong.append("hooks.allowConversationAccess is not true, so nothing is recalled or captured")
    settings = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    base = str(settings.get("baseUrl") or DEFAULT_URL).rstrip("/")
    if base != url:
        wrong.append(f"baseUrl is {base}, the API is at {url}")
    token_file = settings.get("tokenFile")
    token_path = cfg.token_path if cfg is not None else None
    if isinstance(token_file, str) and token_path and Path(token_file).expanduser().resolve() != token_path:
        wrong.append(f"tokenFile is {token_file}, the config's token is {token_path}")
    slot = setup.memory_slot == openclaw.PLUGIN_ID
    if mode == "slot" and not (slot and not setup.memory_core_enabled):
        wrong.append(f"slot mode, but the memory slot is {setup.memory_slot}'s or memory-core is enabled")
    if mode == "supplement" and slot:
        wrong.append("supplement mode, but the memory slot is the plugin's, not memory-core's")
    return wrong


def _plugin_id(folder: Path) -> object:
    manifest = _json(folder / "openclaw.plugin.json")
    return manifest.get("id") if isinstance(manifest, dict) else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _obsidian(cfg: Config, url: str, token: str | None, found: Diagnosis) -> None:
    folder = cfg.vault / ".obsidian" / "plugins" / PLUGIN_ID
    fix = "vaultsync obsidian install"
    if not (folder / "main.js").is_file():
        found.add("obsidian", "fail", f"the vault plugin is not installed in {cfg.vault}", fix)
        return
    manifest = _json(folder / "manifest.json")
    version = manifest.get("version", "?") if isinstance(manifest, dict) else "?"
    if (shipped() / "main.js").is_file() and (folder / "main.js").read_bytes() != (shipped() / "main.js").read_bytes():
        found.add("obsidian", "fail", f"the installed plugin {version} is not the one this vaultsync ships", fix)
        return
    data = _json(folder / "data.json")
    data = data if isinstance(data, dict) else {}
    if str(data.get("baseUrl", "")).rstrip("/") != url or (token and data.get("token") != token):
        found.add("obsidian", "fail", "the plugin's address or token is not this API's", fix)
        return
    enabled = _json(cfg.vault / ".obsidian" / "community-plugins.json")
    if not (isinstance(enabled, list) and PLUGIN_ID in enabled):
        found.add(
            "obsidian",
            "fail",
            f"the plugin {version} is installed but not enabled in Obsidian",
            "in Obsidian: Settings -> Community plugins -> turn on Vaultsync",
        )
        return
    found.add("obsidian", "ok", f"the plugin {version} is installed, current and enabled")


def _versions(found: Diagnosis) -> None:
    parts = [f"vaultsync {__version__}", f"python {sys.version.split()[0]}"]
    version = git_version() if shutil.which("git") else ()
    parts.append(f"git {'.'.join(map(str, version))}" if version else "git: none")
    if shutil.which("openclaw"):
        said = services.run_command(["openclaw", "--version"], timeout=60)
        match = re.search(r"\d+\.\d+\.\d+\S*", said.out)
        parts.append(f"openclaw {match.group(0) if match else said.out[:40]}")
    found.add("versions", "ok", ", ".join(parts))


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
