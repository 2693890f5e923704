"""Shared helpers for the two-way sync tests: a real memory tree, a real vault with a real git repo.

The expensive part (init + the first pass over vault-example) is built once per session by ``build_synced``;
each test copies that folder with ``clone`` and gets its own config pointing at the copy. Git identity is
isolated with ``isolate_git`` so no commit ever depends on the machine's ~/.gitconfig.
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from helpers import REPO
from vaultsync import config as configmod
from vaultsync.app.init import init_vault
from vaultsync.config import Config, GitSettings
from vaultsync.engine.run import run_pass
from vaultsync.model import Report
from vaultsync.options import PassOptions

EXAMPLE = REPO / "vault-example"
# The example's newest daily note is 2026-12-01: that is "today" unless a test says otherwise.
TODAY = date(2026, 12, 1)
NOW = datetime(2026, 12, 1, 9, 30, 0)
STAMP = NOW.strftime("%Y%m%d-%H%M%S")
AGENT_NAME = "vaultsync agent"

SARAH = "areas/people/sarah-chen"
SARAH_DIR = "2 Areas/people/sarah-chen"
MIGUEL = "areas/people/miguel-ortiz"
MIGUEL_DIR = "2 Areas/people/miguel-ortiz"
ACME = "areas/companies/acme-corp"
ACME_DIR = "2 Areas/companies/acme-corp"
LIWEI = "areas/people/li-wei"
LIWEI_DIR = "2 Areas/people/li-wei"
ATLAS = "projects/project-atlas"
ATLAS_DIR = "1 Projects/project-atlas"


def isolate_git(setenv: Callable[[str, str], Any], tmp: Path, global_config: str = "") -> Path:
    """Point every git config lookup at files under ``tmp``; returns the GIT_CONFIG_GLOBAL file.

    HOME and XDG_CONFIG_HOME move too, because some git front ends read ~/.gitconfig directly.
    """
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = tmp / "gitconfig-global"
    gitconfig.write_text(global_config, encoding="utf-8")
    setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    setenv("GIT_CONFIG_NOSYSTEM", "1")
    setenv("HOME", str(home))
    setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return gitconfig


@dataclass
class Env:
    root: Path
    cfg: Config

    @property
    def workspace(self) -> Path:
        return self.cfg.workspace

    @property
    def life(self) -> Path:
        return self.cfg.life

    @property
    def vault(self) -> Path:
        return self.cfg.vault

    @property
    def config_path(self) -> Path:
        return self.root / "config.toml"

    # -- running passes ----------------------------------------------------------------------------------
    def sync(self, **options: Any) -> Report:
        options.setdefault("today", TODAY)
        options.setdefault("now", lambda: NOW)
        return run_pass(self.cfg, PassOptions(**options))

    def reconfigure(self, **git: str) -> None:
        """Rewrite the config file with other [git] settings and load it back."""
        cfg = replace(self.cfg, git=replace(self.cfg.git, **git))
        self.config_path.write_text(configmod.dumps(cfg), encoding="utf-8")
        self.cfg = configmod.load(self.config_path)

    # -- the memory side (what the agent does) -------------------------------------------------------------
    def items_path(self, rel: str) -> Path:
        return self.life / rel / "items.json"

    def items_doc(self, rel: str) -> Any:
        return json.loads(self.items_path(rel).read_bytes())

    def facts(self, rel: str) -> list[dict[str, Any]]:
        return fact_list(self.items_doc(rel))

    def fact(self, rel: str, fact_id: str) -> dict[str, Any]:
        found = [f for f in self.facts(rel) if f.get("id") == fact_id]
        assert len(found) == 1, f"{fact_id}: {len(found)} facts with that id in {rel}"
        return found[0]

    def fact_by_text(self, rel: str, start: str) -> dict[str, Any]:
        found = [f for f in self.facts(rel) if str(f.get("fact", "")).startswith(start)]
        assert len(found) == 1, f"{start!r}: {len(found)} matching facts in {rel}"
        return found[0]

    def agent_edit(self, rel: str, change: Callable[[list[dict[str, Any]]], None]) -> None:
        """The agent rewrites items.json the way it always does: json.dumps(indent=2), UTF-8."""
        doc = self.items_doc(rel)
        change(fact_list(doc))
        self.items_path(rel).write_bytes(dump_items(doc))

    def mem_file(self, rel: str) -> Path:
        return self.workspace / rel

    # -- the vault side (what the person does) -------------------------------------------------------------
    def note(self, rel: str) -> Path:
        return self.vault / rel

    def fact_note(self, vault_dir: str, stem: str) -> Path:
        return self.vault / vault_dir / "facts" / f"{stem}.md"

    def fact_note_by_text(self, vault_dir: str, start: str) -> Path:
        found = [p for p in (self.vault / vault_dir / "facts").glob("*.md") if body_of(p).startswith(start)]
        assert len(found) == 1, f"{start!r}: {len(found)} fact notes in {vault_dir}"
        return found[0]

    # -- git ------------------------------------------------------------------------------------------------
    def git(self, *args: str) -> str:
        run = subprocess.run(["git", *args], cwd=self.vault, capture_output=True, text=True, check=True)
        return run.stdout

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def commit_info(self, rev: str) -> tuple[str, str, set[str]]:
        """(author name, subject, paths touched) of one commit."""
        out = self.git("show", "--no-renames", "--name-only", "-z", "--format=%an%x00%s%x00", rev)
        parts = [p.strip("\n") for p in out.split("\0")]
        return parts[0], parts[1], {p for p in parts[2:] if p}

    def commits_since(self, old_head: str) -> list[str]:
        return self.git("rev-list", "--reverse", f"{old_head}..HEAD").split()

    # -- snapshots ------------------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, bytes]:
        """Every file of both memory roots and the vault (its .git and state folder aside)."""
        files: dict[str, bytes] = {}
        for label, root in (("workspace", self.workspace), ("life", self.life), ("vault", self.vault)):
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root).as_posix()
                if path.is_file() and not rel.startswith((".git/", ".vaultsync/")):
                    files[f"{label}/{rel}"] = path.read_bytes()
        return files


def base_rows(env: Env) -> dict[str, list[Any]]:
    """Every row of the base, table by table, for comparing two passes' outcomes."""
    db = sqlite3.connect(env.cfg.state_dir / "base.sqlite")
    try:
        return {t: sorted(db.execute(f"SELECT * FROM {t}")) for t in ("units", "ids", "conflicts", "reported")}
    finally:
        db.close()


def fact_list(doc: Any) -> list[dict[str, Any]]:
    if isinstance(doc, list):
        return doc
    for key in ("facts", "items"):
        if isinstance(doc.get(key), list):
            return doc[key]
    raise AssertionError(f"no fact list in {doc!r:.80}")


def dump_items(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def build_synced(root: Path) -> Env:
    """Copy vault-example under ``root``, init a vault and run the first pass (the caller isolates git)."""
    shutil.copytree(EXAMPLE, root / "mem")
    config_path = root / "config.toml"
    # The fact text in the body only: the shape these tests edit (test_fact_text_property.py: the property).
    init_vault(root / "mem" / "workspace", root / "mem" / "life", root / "vault", config_path, fact_text=False)
    env = Env(root, configmod.load(config_path))
    report = env.sync()
    assert report.exit_code == 0 and not report.stopped, report.to_json()
    return env


def clone(template: Path, root: Path) -> Env:
    """A private copy of a synced setup: same bytes, same base, same git history, its own paths."""
    shutil.copytree(template, root, symlinks=True)
    old = configmod.load(template / "config.toml")
    cfg = Config(
        workspace=root / "mem" / "workspace",
        life=root / "mem" / "life",
        vault=root / "vault",
        layout=old.layout,
        git=GitSettings(),
        safety=old.safety,
    )
    (root / "config.toml").write_text(configmod.dumps(cfg), encoding="utf-8")
    return Env(root, configmod.load(root / "config.toml"))


# -- editing notes like a person in Obsidian ----------------------------------------------------------------
def split(path: Path) -> tuple[list[str], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path} has no frontmatter"
    end = text.index("\n---\n", 3)
    return text[4 : end + 1].splitlines(), text[end + 5 :]


def join(lines: Iterable[str], body: str) -> str:
    return "---\n" + "".join(line + "\n" for line in lines) + "---\n" + body


def body_of(path: Path) -> str:
    return split(path)[1]


def set_prop(path: Path, key: str, value: str) -> None:
    """Set a property the way the Properties UI does: replace its line, or add it after the last one."""
    lines, body = split(path)
    pattern = re.compile(rf"^{re.escape(key)}:( |$)")
    hits = [i for i, line in enumerate(lines) if pattern.match(line)]
    new = f"{key}: {value}" if value else f"{key}:"
    if hits:
        lines[hits[0]] = new
    else:
        lines.append(new)
    path.write_text(join(lines, body), encoding="utf-8")


def set_body(path: Path, body: str) -> None:
    lines, _ = split(path)
    path.write_text(join(lines, body), encoding="utf-8")


def replace_text(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


# -- checking diffs -------------------------------------------------------------------------------------------
def changed_lines(old: bytes, new: bytes) -> tuple[list[str], list[str]]:
    """The lines only in ``old`` and the lines only in ``new``, aligned as a line diff aligns them."""
    a = old.decode().splitlines()
    b = new.decode().splitlines()
    gone: list[str] = []
    added: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            gone += a[i1:i2]
            added += b[j1:j2]
    return gone, added


def assert_diff_only_touches(old: bytes, new: bytes, values: Iterable[str]) -> None:
    """Every line that differs between the two files holds one of the edited values (JSON-escaped).

    The single exception is the one JSON's grammar forces: when a key is added after the last key of an
    object, the line before it gains a trailing comma and nothing else.
    """
    wanted = [json.dumps(v, ensure_ascii=False)[1:-1] for v in values]
    gone, added = changed_lines(old, new)
    assert added, "the file did not change"
    comma_only = {line + "," for line in gone}
    for line in added:
        assert any(w in line for w in wanted) or line in comma_only, f"unexpected changed line {line!r}"
    for line in gone:
        if line + "," in added:
            continue
        # A replaced line held the old value of the same key: it must have become one of the added lines.
        key = line.strip().split(":", 1)[0]
        assert any(a.strip().startswith(key + ":") for a in added), f"line {line!r} removed"


def props_of(path: Path) -> dict[str, Any]:
    """A note's properties as Obsidian (YAML 1.2 core schema) reads them."""
    from vaultsync.text.yamlcore import parse_properties

    lines, _ = split(path)
    return parse_properties("".join(line + "\n" for line in lines))


def obsidian_reserialise(path: Path, unquote: Iterable[str] = (), single_quote: Iterable[str] = ()) -> None:
    """Rewrite a note's frontmatter the way Obsidian's Properties UI may: same values, other text.

    Keys come out in reverse order, block lists become flow lists (``[a, b]``), the ``unquote`` keys lose
    the double quotes around their values and the ``single_quote`` keys get single quotes instead. The body
    is kept byte for byte.
    """
    lines, body = split(path)
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith((" ", "-")) and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    out = []
    for block in reversed(blocks):
        key, _, value = block[0].partition(":")
        items = [item.strip()[2:] for item in block[1:]]
        if items:
            out.append(f"{key}: [{', '.join(items)}]")
            continue
        value = value.strip()
        quoted = len(value) > 1 and value[0] == value[-1] == '"'
        if key in unquote and quoted:
            value = value[1:-1]
        elif key in single_quote and quoted and "'" not in value:
            value = f"'{value[1:-1]}'"
        out.append(f"{key}: {value}" if value else f"{key}:")
    path.write_text(join(out, body), encoding="utf-8")
