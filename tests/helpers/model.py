"""Reading both sides of a synced setup independently of vaultsync, for the model-based test.

The stateful test (test_model_stateful.py) must judge vaultsync's output without trusting vaultsync's own
readers, or a bug in a reader would hide the bug it produced. So this module walks the memory tree and the
vault with plain ``os``/``json``/PyYAML and the layout rules of docs/vault-format.md: entity folders, fact notes,
the entity note's body above the view marker, daily notes and the other mirrored files.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from helpers.twoway import Env, fact_list

VIEW_MARKER = "%% vaultsync: live view of this entity's facts; edit a fact in its own note %%"
CONFLICT_MARK = ".vaultsync-conflict-"
DAILY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")
PARA = ("projects", "areas", "resources", "archives")
AGENT_FOLDER = "agent"  # [vault] agent: 3 Resources/agent and 4 Archives/agent hold the workspace files


# -- text helpers ---------------------------------------------------------------------------------------------
def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text, body) of a note; (None, text) when it has no ``---`` block."""
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            return text[4 : len(text) - 3], ""
        return None, text
    return text[4 : end + 1], text[end + 5 :]


def note_props(text: str) -> dict[str, Any]:
    fm, _ = split_frontmatter(text)
    if fm is None:
        return {}
    loaded = yaml.safe_load(fm)
    return loaded if isinstance(loaded, dict) else {}


def summary_body(text: str | None) -> str:
    """summary.md as the vault shows it: its body without its own frontmatter ("" when there is none)."""
    if text is None:
        return ""
    return split_frontmatter(text)[1]


def note_summary(text: str) -> str:
    """The entity note's summary text: its body above the ``%% vaultsync`` view marker line.

    Text a person wrote below the view belongs to the summary too, at its end (docs/two-way.md, "Entity
    notes"); a pass carries it to summary.md but need not move it above the view in the note.
    """
    body = split_frontmatter(text)[1]
    if body.startswith(VIEW_MARKER):
        body = "\n" + body
    cut = body.rfind("\n" + VIEW_MARKER)
    if cut < 0:
        return body  # a note the person made: all of it is the summary
    summary, rest = body[:cut], body[cut + 1 :]
    fence = rest.find("\n```\n", rest.find("```base"))
    tail = rest[fence + 5 :] if fence >= 0 else ""
    if tail.strip():
        summary = f"{summary}\n{tail}" if summary else tail
    return summary


def is_copy(path: str) -> bool:
    return CONFLICT_MARK in path.rsplit("/", 1)[-1]


def slug_of(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def link_id(value: Any) -> Any:
    """The note a ``supersededBy`` value links to (``"[[2 Areas/x/facts/f1|f1]]"`` -> ``f1``), else the value."""
    if isinstance(value, str) and value.startswith("[[") and value.endswith("]]"):
        return value[2:-2].split("|", 1)[0].rsplit("/", 1)[-1]
    return value


# -- the two sides as plain data ------------------------------------------------------------------------------
@dataclass
class MemEntity:
    rel: str
    folder: Path
    facts: list[dict[str, Any]] | None  # None: no items.json
    summary: str | None  # summary.md text, None when missing


@dataclass
class VaultFact:
    stem: str
    path: str
    props: dict[str, Any]
    body: str

    @property
    def text(self) -> str:
        return self.body.removesuffix("\n")


@dataclass
class VaultEntity:
    rel: str
    folder: str  # vault-relative
    note: str | None  # the entity note's text
    facts: dict[str, VaultFact] = field(default_factory=dict)


def para_folders(env: Env) -> dict[str, str]:
    return env.cfg.layout.para_folders()


def vault_dir_of(env: Env, rel: str) -> str:
    para, _, rest = rel.partition("/")
    return f"{para_folders(env)[para]}/{rest}"


def memory_entities(env: Env) -> dict[str, MemEntity]:
    """Every folder under life/<para>/ (below the PARA folder) holding items.json or summary.md."""
    found: dict[str, MemEntity] = {}
    for para in PARA:
        top = env.life / para
        if not top.is_dir():
            continue
        for folder in sorted(p for p in top.rglob("*") if p.is_dir()):
            rel = folder.relative_to(env.life).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            items = folder / "items.json"
            summary = folder / "summary.md"
            if not items.is_file() and not summary.is_file():
                continue
            facts = fact_list(json.loads(items.read_bytes())) if items.is_file() else None
            text = summary.read_text(encoding="utf-8") if summary.is_file() else None
            found[rel] = MemEntity(rel, folder, facts, text)
    return found


def vault_entities(env: Env) -> dict[str, VaultEntity]:
    """Every folder under a PARA folder holding a note named after it or a facts/ folder."""
    found: dict[str, VaultEntity] = {}
    for para, top_name in para_folders(env).items():
        top = env.vault / top_name
        if not top.is_dir():
            continue
        for folder in sorted(p for p in top.rglob("*") if p.is_dir()):
            sub = folder.relative_to(top).as_posix()
            if sub == "facts" or sub.endswith("/facts") or any(s.startswith(".") for s in sub.split("/")):
                continue
            if para in ("resources", "archives") and (sub == AGENT_FOLDER or sub.startswith(AGENT_FOLDER + "/")):
                continue
            note = folder / f"{folder.name}.md"
            facts_dir = folder / "facts"
            if not note.is_file() and not facts_dir.is_dir():
                continue
            entity = VaultEntity(
                f"{para}/{sub}",
                folder.relative_to(env.vault).as_posix(),
                note.read_text(encoding="utf-8") if note.is_file() else None,
            )
            if facts_dir.is_dir():
                for path in sorted(facts_dir.glob("*.md")):
                    if is_copy(path.name):
                        continue
                    text = path.read_text(encoding="utf-8")
                    entity.facts[path.stem] = VaultFact(
                        path.stem,
                        path.relative_to(env.vault).as_posix(),
                        note_props(text),
                        split_frontmatter(text)[1],
                    )
            found[entity.rel] = entity
    return found


def mirrored_files(env: Env) -> dict[str, tuple[Path, str]]:
    """Memory files mirrored byte for byte -> (memory path, vault-relative path)."""
    pairs: dict[str, tuple[Path, str]] = {}
    agent_dir = f"{env.cfg.layout.resources}/{AGENT_FOLDER}"
    for name in ("MEMORY.md", "HEARTBEAT.md"):
        pairs[f"workspace/{name}"] = (env.workspace / name, f"{agent_dir}/{name}")
    memory = env.workspace / "memory"
    for path in sorted(memory.rglob("*.md")):
        sub = path.relative_to(memory).as_posix()
        if "/" not in sub and DAILY_NAME.match(sub):
            vault = f"{env.cfg.layout.daily}/{sub}"
        elif sub.startswith("archive/"):
            vault = f"{env.cfg.layout.archives}/{AGENT_FOLDER}/{sub.removeprefix('archive/')}"
        else:
            vault = f"{agent_dir}/memory/{sub}"
        pairs[f"workspace/memory/{sub}"] = (path, vault)
    index = env.life / "index.md"
    pairs["life/index.md"] = (index, f"{agent_dir}/life/index.md")
    return pairs


def daily_names(env: Env) -> tuple[set[str], set[str]]:
    """The daily note names on the memory side and on the vault side (conflict copies left out)."""
    memory = env.workspace / "memory"
    daily = env.vault / env.cfg.layout.daily
    mem = {p.name for p in memory.glob("*.md") if DAILY_NAME.match(p.name)} if memory.is_dir() else set()
    vault = {p.name for p in daily.glob("*.md") if DAILY_NAME.match(p.name)} if daily.is_dir() else set()
    return mem, vault


# -- invariant 1: both sides say the same thing ---------------------------------------------------------------
def fact_signature(text: Any, status: Any, category: Any) -> tuple[str, str, str]:
    return (str(text), str(status), str(category))


def assert_sides_agree(env: Env) -> None:
    """Every entity, fact, summary and mirrored file means the same thing on both sides after a pass."""
    mem = memory_entities(env)
    # A folder left with an empty facts/ (the person deleted the last fact note of an entity without a summary)
    # holds no unit: vaultsync reads it as an entity with nothing in it, and so does this check.
    vault = {r: e for r, e in vault_entities(env).items() if e.note is not None or e.facts}
    assert sorted(mem) == sorted(vault), f"entities differ: memory only {set(mem) - set(vault)}, vault only " + str(
        set(vault) - set(mem)
    )
    for rel, m in mem.items():
        v = vault[rel]
        where = f"{rel}"
        assert v.note is not None, f"{where}: no entity note in the vault"
        assert VIEW_MARKER in v.note, f"{where}: the entity note has no facts view:\n{v.note}"
        # The summary: the note body above the view is summary.md's body, byte for byte.
        assert note_summary(v.note) == summary_body(m.summary), (
            f"{where}: entity note body != summary.md body\n--- vault\n{note_summary(v.note)!r}\n"
            f"--- memory\n{summary_body(m.summary)!r}"
        )
        assert f'file.inFolder("{v.folder}/facts")' in v.note, f"{where}: the view points at another folder"
        facts = m.facts or []
        # Facts: the same multiset of (text, status, category) on both sides, and each id its own note.
        mem_sigs = Counter(fact_signature(f.get("fact"), f.get("status"), f.get("category")) for f in facts)
        vault_sigs = Counter(
            fact_signature(n.text, n.props.get("status"), n.props.get("category")) for n in v.facts.values()
        )
        assert mem_sigs == vault_sigs, (
            f"{where}: facts differ\nmemory only: {sorted((mem_sigs - vault_sigs).elements())}\n"
            f"vault only: {sorted((vault_sigs - mem_sigs).elements())}"
        )
        for record in facts:
            fact_id = record.get("id")
            if not isinstance(fact_id, str):
                continue
            note = v.facts.get(fact_id)
            assert note is not None, f"{where}: fact {fact_id} has no note {fact_id}.md"
            assert note.props.get("id") == fact_id, f"{where}: note {fact_id}.md has id {note.props.get('id')!r}"
            assert note.text == record.get("fact"), f"{where}/{fact_id}: text differs"
            successor = record.get("supersededBy", record.get("superseded_by"))
            shown = note.props.get("supersededBy")
            if successor is None:
                assert shown is None, f"{where}/{fact_id}: note shows supersededBy {shown!r}, memory has none"
            else:
                # A link to a fact of the same entity, or the value as written (docs/vault-format.md).
                assert link_id(shown) == successor or shown == successor, (
                    f"{where}/{fact_id}: supersededBy {successor!r} shown as {shown!r}"
                )
        props = note_props(v.note)
        statuses = Counter(f.get("status") for f in facts)
        assert props.get("facts_active") == statuses["active"], f"{where}: facts_active {props.get('facts_active')}"
        assert props.get("facts_superseded") == statuses["superseded"], f"{where}: facts_superseded"
    # Daily notes and the other mirrored files: identical bytes, the same set of daily notes.
    mem_days, vault_days = daily_names(env)
    assert mem_days == vault_days, f"daily notes differ: memory only {mem_days - vault_days}, vault only " + str(
        vault_days - mem_days
    )
    for mem_path, (path, vault_rel) in mirrored_files(env).items():
        vault_path = env.vault / vault_rel
        if not path.exists():
            assert not vault_path.exists(), f"{vault_rel} exists, {mem_path} does not"
            continue
        assert vault_path.is_file(), f"{mem_path} has no note {vault_rel}"
        assert vault_path.read_bytes() == path.read_bytes(), f"{mem_path} and {vault_rel} differ"


# -- reading text for markers ---------------------------------------------------------------------------------
def memory_texts(env: Env) -> dict[str, str]:
    """Every file of the memory tree by "workspace/..." or "life/..." path."""
    out: dict[str, str] = {}
    for label, root in (("workspace", env.workspace), ("life", env.life)):
        for path in root.rglob("*"):
            if path.is_file():
                out[f"{label}/{path.relative_to(root).as_posix()}"] = path.read_text(encoding="utf-8", errors="replace")
    return out


def vault_texts(env: Env) -> dict[str, str]:
    """Every note vaultsync reads or writes, by vault-relative path (conflict copies included)."""
    out: dict[str, str] = {}
    tops = [*para_folders(env).values(), env.cfg.layout.daily]
    for top in tops:
        root = env.vault / top
        if not root.is_dir():
            continue
        for path in root.rglob("*.md"):
            out[path.relative_to(env.vault).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return out


def vault_bytes(env: Env) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for top in [*para_folders(env).values(), env.cfg.layout.daily]:
        root = env.vault / top
        if root.is_dir():
            for path in root.rglob("*.md"):
                out[path.relative_to(env.vault).as_posix()] = path.read_bytes()
    return out


def trash_texts(env: Env, stamp: str) -> list[str]:
    """The files one pass put in the trash (``<vault>/.vaultsync/trash/<stamp>/``)."""
    root = env.vault / ".vaultsync" / "trash" / stamp
    if not root.is_dir():
        return []
    return [p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file()]


# -- git ------------------------------------------------------------------------------------------------------
def git(env: Env, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=env.vault, capture_output=True, text=True, check=check)


def commit_diffs(env: Env, since: str) -> list[tuple[str, str]]:
    """(author, added lines) of each commit after ``since``, oldest first."""
    out = git(env, "log", "--reverse", "--no-renames", "-p", "--format=%x00%an", f"{since}..HEAD").stdout
    commits = []
    for chunk in out.split("\0")[1:]:
        author, _, diff = chunk.partition("\n")
        added = "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
        commits.append((author, added))
    return commits


def assert_git_clean(env: Env) -> None:
    """Everything a pass wrote is committed, and the repository is sound."""
    status = git(env, "status", "--porcelain", "--untracked-files=all").stdout
    assert status == "", f"uncommitted changes in the vault after a pass:\n{status}"
    fsck = git(env, "fsck", "--no-dangling", "--no-progress", check=False)
    assert fsck.returncode == 0 and not fsck.stdout.strip(), f"git fsck: {fsck.stdout}{fsck.stderr}"
