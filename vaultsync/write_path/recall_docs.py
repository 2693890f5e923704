"""The memory tree as recall documents: what the index holds for each entity and each file.

The trees are read with the readers a pass uses (``list_memory``, ``scan_memory_scope``), so recall sees the
same entities, facts and files, skips the same broken inputs, and names the same notes a pass writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vaultsync.config import Config
from vaultsync.core.plan import display_name
from vaultsync.memory.identity import assign_notes
from vaultsync.memory.tree import MemEntity, MemFile, list_memory, scan_memory_scope
from vaultsync.model import Record, canonical
from vaultsync.names import daily_date
from vaultsync.state.recall import Doc, Stat
from vaultsync.state.recall_query import grams
from vaultsync.text.decoding import NotText, decode, strip_bom
from vaultsync.vault.layout import VaultLayout, slug_of

ENTITY_FILES = ("items.json", "summary.md")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MONTH_NAME = re.compile(r"(\d{4}-\d{2})(?:-(\d{2}))?")


@dataclass
class TreeFiles:
    """Every memory file recall reads, with its stat now; entity files map to their entity."""

    stats: dict[str, Stat]
    entity_of: dict[str, str]  # "life/<rel>/items.json" -> rel


def _stat(path: Path) -> Stat | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def tree_files(cfg: Config) -> TreeFiles:
    """Find the files the way a full scan does, and stat them (a few thousand stats at 50k facts)."""
    listing = list_memory(cfg.workspace, cfg.life, VaultLayout(cfg.layout).reserved_life_dirs())
    found = TreeFiles({}, {})
    for rel in listing.rels:
        for name in ENTITY_FILES:
            st = _stat(cfg.life / rel / name)
            if st:
                found.stats[f"life/{rel}/{name}"] = st
                found.entity_of[f"life/{rel}/{name}"] = rel
    for mem_path in listing.files:
        st = stat_of(cfg, mem_path)
        if st:
            found.stats[mem_path] = st
    return found


def stat_of(cfg: Config, source: str) -> Stat | None:
    """The stat now of the memory file ``source`` names (``workspace/...`` or ``life/...``); None when gone."""
    root, _, rest = source.partition("/")
    return _stat((cfg.workspace if root == "workspace" else cfg.life) / rest)


def entity_of_source(source: str) -> str | None:
    """The entity a recorded source belonged to, for a source that is gone from the tree."""
    for name in ENTITY_FILES:
        if source.startswith("life/") and source.endswith("/" + name):
            return source[len("life/") : -len(name) - 1]
    return None


def read_docs(cfg: Config, rels: Iterable[str], files: Iterable[str]) -> list[Doc]:
    """Read the entities ``rels`` and the memory files ``files`` and return their documents."""
    layout = VaultLayout(cfg.layout)
    scan = scan_memory_scope(cfg.workspace, cfg.life, rels, files)
    docs: list[Doc] = []
    for rel, entity in scan.entities.items():
        docs += _entity_docs(layout, rel, entity)
    for mem_file in scan.files.values():
        if not mem_file.broken:
            docs += _file_docs(layout, mem_file)
    return docs


def _date(value: object) -> str | None:
    m = DATE.match(value) if isinstance(value, str) else None
    return m.group(0) if m else None


def _fact_text(record: Record) -> str:
    text = record.get("fact")
    return text if isinstance(text, str) else canonical({k: v for k, v in record.items() if k != "id"})


def _entity_docs(layout: VaultLayout, rel: str, entity: MemEntity) -> Iterator[Doc]:
    wrapper = entity.doc.wrapper if entity.doc else {}
    name = display_name(entity.content, wrapper, rel)
    aliases = entity.content.props.get("aliases")
    extra_names = [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
    names = " ".join(dict.fromkeys([name, *extra_names, slug_of(rel).replace("-", " ")]))
    if entity.summary and entity.content.body.strip():
        text, _ = strip_bom(decode(entity.summary.raw))
        body = entity.content.body
        offset = text[: text.find(body)].count("\n") if body in text else 0
        yield Doc(
            source=f"life/{rel}/summary.md",
            kind="summary",
            root="life",
            path=f"{rel}/summary.md",
            body=body.strip(),
            names=names,
            grams=grams(body),
            first_line=offset + 1,
            last_line=offset + len(body.rstrip("\n").splitlines()),
            entity=rel,
            vault_path=layout.entity_note(rel),
        )
    for note, (_, record) in assign_notes(slug_of(rel), entity.facts, {}).items():
        text = _fact_text(record)
        status, successor = record.get("status"), record.get("supersededBy", record.get("superseded_by"))
        category = record.get("category")
        yield Doc(
            source=f"life/{rel}/items.json",
            kind="fact",
            root="life",
            path=f"{rel}/items.json",
            body=text,
            names=names,
            extra=category if isinstance(category, str) else "",
            grams=grams(text),
            fact_id=note,
            entity=rel,
            status=status if isinstance(status, str) else None,
            superseded_by=successor if isinstance(successor, str) else None,
            ts=_date(record.get("timestamp", record.get("date"))),
            vault_path=layout.fact_note(rel, note),
        )


def _file_date(mem_path: str) -> str | None:
    name = mem_path.rsplit("/", 1)[-1]
    day = daily_date(name)
    if day:
        return day.isoformat()
    m = MONTH_NAME.match(name)
    return f"{m.group(1)}-{m.group(2) or '01'}" if m else None


def _file_docs(layout: VaultLayout, mem_file: MemFile) -> Iterator[Doc]:
    from vaultsync.memory.blocks import blocks, sections, speaker

    try:
        text, _ = strip_bom(decode(mem_file.raw))
    except NotText:
        return
    root, _, path = mem_file.mem_path.partition("/")
    daily = mem_file.mem_path.startswith("workspace/memory/")
    file_date = _file_date(mem_file.mem_path) if daily else None
    # A daily note's own date says when its lines were written; an archive's name is only a month.
    dated_by_name = daily and daily_date(path.rsplit("/", 1)[-1]) is not None
    for piece in blocks(text) if daily else sections(text):
        yield Doc(
            source=mem_file.mem_path,
            kind="daily" if daily else "memory",
            root=root,
            path=path,
            body=piece.text,
            names=piece.heading,
            grams=grams(piece.text),
            first_line=piece.first,
            last_line=piece.last,
            ts=(file_date or piece.date) if dated_by_name else (piece.date or file_date),
            vault_path=layout.file_note(mem_file.mem_path),
            speaker=speaker(piece.text) if daily else None,
        )
