"""Shared helpers for the tests that build a small tree of their own (a throw-away workspace, life tree and vault).

Every fixture these helpers write is made up for the tests; the shapes (bare arrays, wrapper objects, facts
without ids, snake_case keys, BOM/CRLF files) follow what real agent memory trees look like.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from vaultsync import config as configmod
from vaultsync.app.init import init_vault
from vaultsync.config import Config
from vaultsync.engine.run import run_pass
from vaultsync.model import ExitCode, Problem, Report, Severity
from vaultsync.options import PassOptions

TODAY = date(2026, 2, 1)
# Files and folders in the vault that are not notes a pass renders.
VAULT_NOISE = (".git/", ".vaultsync/")


def facts_view(facts_dir: str) -> str:
    """The live view block an entity note ends with, written out by hand so a change to it shows up here."""
    return (
        "%% vaultsync: live view of this entity's facts; edit a fact in its own note %%\n"
        "```base\n"
        "filters:\n"
        "  and:\n"
        f'    - file.inFolder("{facts_dir}")\n'
        "    - not:\n"
        '        - file.name.contains(".vaultsync-conflict-")\n'
        "views:\n"
        "  - type: table\n"
        "    name: Facts\n"
        "    order:\n"
        "      - file.name\n"
        "      - status\n"
        "      - category\n"
        "      - timestamp\n"
        "    sort:\n"
        "      - property: timestamp\n"
        "        direction: DESC\n"
        "```\n"
    )


def entity_note(frontmatter: str, summary: str, facts_dir: str) -> str:
    """An entity note as the contract describes it: derived properties, the summary text, then the view."""
    return f"---\n{frontmatter}---\n{summary}\n{facts_view(facts_dir)}"


def fact(fact_id: str | None, text: str, **extra: Any) -> dict[str, Any]:
    """A fact in the agent's usual key order; keyword arguments add or override keys."""
    record: dict[str, Any] = {} if fact_id is None else {"id": fact_id}
    record.update(
        {"fact": text, "category": "context", "timestamp": "2026-01-15", "source": "conversation", "status": "active"}
    )
    record.update(extra)
    return record


def dumps(value: Any, *, bom: bool = False, crlf: bool = False, indent: int | None = 2) -> bytes:
    text = json.dumps(value, indent=indent, ensure_ascii=False) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode()


@dataclass
class Env:
    root: Path
    workspace: Path
    life: Path
    vault: Path
    cfg: Config

    # -- writing fixtures --------------------------------------------------------------------------------
    def write(self, path: Path, data: bytes | str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def entity(self, rel: str, items: Any = None, summary: bytes | str | None = None) -> Path:
        """Write life/<rel>/items.json (a JSON value, or raw bytes as they are) and summary.md."""
        folder = self.life / rel
        folder.mkdir(parents=True, exist_ok=True)
        if items is not None:
            self.write(folder / "items.json", items if isinstance(items, bytes) else dumps(items))
        if summary is not None:
            self.write(folder / "summary.md", summary)
        return folder

    def daily(self, name: str, text: bytes | str) -> Path:
        return self.write(self.workspace / "memory" / name, text)

    # -- running ------------------------------------------------------------------------------------------
    def sync(self, **options: Any) -> Report:
        options.setdefault("today", TODAY)
        options.setdefault("now", lambda: datetime(2026, 2, 1, 12, 0, 0))
        return run_pass(self.cfg, PassOptions(**options))

    # -- reading ------------------------------------------------------------------------------------------
    def note(self, vault_rel: str) -> str:
        """A vault note's exact text (no newline translation: CRLF stays CRLF)."""
        return (self.vault / vault_rel).read_bytes().decode("utf-8")

    def items(self, rel: str) -> Any:
        return json.loads((self.life / rel / "items.json").read_bytes().decode("utf-8-sig"))

    def memory(self) -> dict[str, bytes]:
        """Every file of both memory roots, by path; symlinks as their target text (never followed)."""
        out: dict[str, bytes] = {}
        for label, root in (("workspace", self.workspace), ("life", self.life)):
            for path in sorted(root.rglob("*")):
                key = f"{label}/{path.relative_to(root).as_posix()}"
                if path.is_symlink():
                    out[key] = b"-> " + str(path.readlink()).encode()
                elif path.is_file():
                    out[key] = path.read_bytes()
        return out

    def vault_files(self) -> dict[str, bytes]:
        """Every file in the vault except git's and vaultsync's own state."""
        out: dict[str, bytes] = {}
        for path in sorted(self.vault.rglob("*")):
            rel = path.relative_to(self.vault).as_posix()
            if any(rel.startswith(n) or f"/{n}" in rel for n in VAULT_NOISE) or not path.is_file():
                continue
            out[rel] = path.read_bytes()
        return out

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.vault), *args], check=True, capture_output=True, text=True, encoding="utf-8"
        ).stdout


def make_env(tmp_path: Path, name: str = "env") -> Env:
    """A workspace, a life tree and an initialised vault under ``tmp_path/name``."""
    root = tmp_path / name
    workspace, life, vault = root / "workspace", root / "life", root / "vault"
    workspace.mkdir(parents=True)
    life.mkdir()
    cfg_path = root / "config.toml"
    # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
    init_vault(workspace, life, vault, cfg_path, fact_text=False)
    return Env(root, workspace.resolve(), life.resolve(), vault.resolve(), configmod.load(cfg_path))


def second_env(env: Env, name: str) -> Env:
    """A fresh vault (and config) over the same workspace and life tree."""
    vault = env.root.parent / name / "vault"
    cfg_path = env.root.parent / name / "config.toml"
    vault.parent.mkdir(parents=True)
    # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
    init_vault(env.workspace, env.life, vault, cfg_path, fact_text=False)
    return Env(env.root, env.workspace, env.life, vault.resolve(), configmod.load(cfg_path))


def first_pass_clean(env: Env) -> dict[str, bytes]:
    """Run the first pass, check it is clean and left the memory tree byte-identical; return the vault."""
    before = env.memory()
    report = env.sync()
    assert_exit(report, ExitCode.CLEAN)
    assert env.memory() == before
    return env.vault_files()


def errors(report: Report) -> list[Problem]:
    return [p for p in report.problems if p.severity is Severity.ERROR]


def problems_for(report: Report, path: Path | str) -> list[Problem]:
    """Problems whose path is ``path`` (absolute memory path or vault-relative note path)."""
    return [p for p in report.problems if p.path == str(path)]


def assert_quiet_second_pass(env: Env) -> None:
    """Invariant 1: with no edits, a pass writes no file and makes no commit."""
    before_vault, before_memory = env.vault_files(), env.memory()
    head = env.git("rev-parse", "HEAD")
    report = env.sync()
    assert report.files_written == 0, report.actions
    assert report.actions == []
    assert report.commits == []
    assert env.git("rev-parse", "HEAD") == head
    assert env.vault_files() == before_vault
    assert env.memory() == before_memory


def assert_exit(report: Report, code: ExitCode) -> None:
    assert report.exit_code is code, (report.stopped, [p.line() for p in report.problems])


def json_type_equal(a: Any, b: Any, where: str = "$") -> None:
    """Equal as JSON values *and* of the same JSON type at every level (1 is not 1.0, True is not 1)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} {a!r} != {type(b).__name__} {b!r}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            json_type_equal(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            json_type_equal(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def edit_body(env: Env, vault_rel: str, old: str, new: str) -> None:
    """What a person does in Obsidian: change words in a note's text, leaving the rest as it is."""
    path = env.vault / vault_rel
    raw = path.read_bytes()
    assert raw.count(old.encode()) == 1, f"{old!r} not exactly once in {vault_rel}"
    path.write_bytes(raw.replace(old.encode(), new.encode()))
