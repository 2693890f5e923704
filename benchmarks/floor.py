"""The floor for a first import: the least work any tool must do to put a memory tree into a git vault.

It reads every items.json and summary.md, writes one note per fact and per entity with plain f-strings at the
paths vaultsync uses (``vaultsync/vault/layout.py``, default layout), copies the daily notes, MEMORY.md,
HEARTBEAT.md and the archive, then runs ``git add -A`` and ``git commit``. No YAML library, no base, no safety
checks, no fsync: what is left is reading, writing and git, so "vaultsync / floor" says how much of vaultsync's
first import is its own overhead. The notes need only be similar in size to vaultsync's, not identical.

It deliberately imports nothing from vaultsync, so its start-up is a bare interpreter's and the floor stays a
floor. Usage: ``python benchmarks/floor.py WORKSPACE LIFE VAULT`` (VAULT must already be a git repository).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

# The default vault layout (config.Layout); the floor does not read a config file.
PARA = {"projects": "1 Projects", "areas": "2 Areas", "resources": "3 Resources", "archives": "4 Archives"}
DAILY = "Daily"
AGENT = "3 Resources/agent"
AGENT_ARCHIVE = "4 Archives/agent"
TAGS = {"people": "memory/person", "companies": "memory/company"}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _facts(raw: str) -> list:
    """The fact list of a bare array or of an ``{entity, facts}`` / ``{type, name, items}`` wrapper."""
    doc = json.loads(raw)
    if isinstance(doc, dict):
        doc = doc.get("facts", doc.get("items", []))
    return [f for f in doc if isinstance(f, dict)]


def _display_name(summary: str, slug: str) -> str:
    for line in summary.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return slug


def _fact_note(rec: dict, slug: str, name: str) -> tuple[str, str]:
    """(note name, note text) for one fact; facts without an id are named from a hash of their text."""
    text = str(rec.get("fact", ""))
    note = rec.get("id") or f"{slug}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
    when = rec.get("timestamp", rec.get("date", ""))
    sup = rec.get("supersededBy", rec.get("superseded_by"))
    sup_line = f'supersededBy: "[[{sup}]]"\n' if sup else ""
    return note, (
        f"---\nid: {note}\nstatus: {rec.get('status', 'active')}\ncategory: {rec.get('category', '')}\n"
        f'timestamp: {when}\nsource: "{rec.get("source", "")}"\n{sup_line}entity: "[[{slug}|{name}]]"\n---\n{text}\n'
    )


def _entity(folder: Path, rel: str, vault: Path) -> None:
    para, _, rest = rel.partition("/")
    slug = rel.rsplit("/", 1)[-1]
    target = vault / PARA[para] / rest
    summary_path, items_path = folder / "summary.md", folder / "items.json"
    summary = summary_path.read_text(encoding="utf-8") if summary_path.is_file() else ""
    facts = _facts(items_path.read_text(encoding="utf-8")) if items_path.is_file() else []
    name = _display_name(summary, slug)
    active = 0
    taken: set[str] = set()
    for rec in facts:
        active += rec.get("status") == "active"
        note, text = _fact_note(rec, slug, name)
        stem, n = note, 1
        while note.casefold() in taken:  # two id-less facts with the same text still need two notes
            n += 1
            note = f"{stem}~{n}"
        taken.add(note.casefold())
        _write(target / "facts" / f"{note}.md", text)
    kind = rel.split("/")[-2] if rel.count("/") >= 2 else para
    _write(
        target / f"{slug}.md",
        f"---\nkind: {kind}\naliases:\n  - {name}\ntags:\n  - {TAGS.get(kind, 'memory/' + kind)}\n"
        f"facts_active: {active}\nfacts_superseded: {len(facts) - active}\n---\n{summary}\n"
        f'```base\nfilters:\n  and:\n    - file.inFolder("{PARA[para]}/{rest}/facts")\n```\n',
    )


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(src.read_bytes())


def import_tree(workspace: Path, life: Path, vault: Path) -> None:
    """Write every note of the memory tree into the vault (no git)."""
    for dirpath, dirnames, filenames in os.walk(life):
        dirnames.sort()
        folder = Path(dirpath)
        rel = folder.relative_to(life).as_posix()
        if "items.json" in filenames or "summary.md" in filenames:
            _entity(folder, rel, vault)
        for name in filenames:
            if name.endswith(".md") and name != "summary.md" and rel.partition("/")[0] in PARA and "/" in rel:
                para, _, rest = rel.partition("/")
                _copy(folder / name, vault / PARA[para] / rest / name)
    for name in ("MEMORY.md", "HEARTBEAT.md"):
        if (workspace / name).is_file():
            _copy(workspace / name, vault / AGENT / name)
    memory = workspace / "memory"
    for path in sorted(memory.glob("*.md")):
        _copy(path, vault / DAILY / path.name)
    for path in sorted((memory / "archive").glob("**/*.md")):
        _copy(path, vault / AGENT_ARCHIVE / path.relative_to(memory / "archive"))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: floor.py WORKSPACE LIFE VAULT", file=sys.stderr)
        return 2
    workspace, life, vault = (Path(a) for a in argv)
    import_tree(workspace, life, vault)
    env = dict(os.environ, GIT_AUTHOR_NAME="floor", GIT_AUTHOR_EMAIL="floor@example.invalid")
    env |= {"GIT_COMMITTER_NAME": "floor", "GIT_COMMITTER_EMAIL": "floor@example.invalid"}
    subprocess.run(["git", "add", "-A"], cwd=vault, check=True, env=env)
    subprocess.run(["git", "commit", "--quiet", "--no-verify", "-m", "floor import"], cwd=vault, check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
