"""From decisions to a plan: the state both sides should hold, and the plain actions that get them there.

The plan is computed in full before anything is written, so ``--dry-run`` can print it and the safety guard
can refuse it. Every vault note is rendered from the merged memory state; a note is written only when what
it means (its properties as values and its body) differs from what is on disk, so Obsidian's own
re-formatting never causes a rewrite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.core.decide import UNKNOWN, Outcome
from vaultsync.core.scope import Context, Names, Planned
from vaultsync.core.units import World, encode_base, plain
from vaultsync.keys import ENTITY, FACT, FILE, mem_path_of, rel_of, scope_of, split_fact_key
from vaultsync.memory.tree import MemoryScan, Summary
from vaultsync.model import Conflict, EntityContent, Problem, Record, SideChange, canonical
from vaultsync.state.entry import BaseEntry
from vaultsync.text.decoding import newline_of
from vaultsync.text.markdown import first_h1
from vaultsync.text.yamlcore import parse_properties
from vaultsync.text.yamldump import dump_properties
from vaultsync.vault.layout import VaultLayout, conflict_copy_name, slug_of
from vaultsync.vault.notes import (
    DATE_KEYS,
)
from vaultsync.vault.scan import VaultScan

ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
TAG_NAMES = {"people": "person", "companies": "company", "projects": "project", "areas": "area"}


@dataclass(frozen=True)
class Action:
    side: str  # "memory" or "vault"
    op: str  # "write", "delete" or "move"
    path: Path
    shown: str  # the path as the report shows it
    data: bytes | None = None
    expected: Any = ...  # content read at scan time (None: must not exist); ... for no check
    keys: tuple[str, ...] = ()  # units whose new base depends on this action
    dest: Path | None = None
    keep_old: bool = False  # a memory write that removes facts: the old file goes to the trash first

    def describe(self) -> str:
        return f"{self.side}: {self.op} {self.shown}"


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    upserts: dict[str, BaseEntry] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    changes: list[SideChange] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    person_paths: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    keep_dirs: set[Path] = field(default_factory=set)  # never removed when a deletion empties them
    names: dict[str, Names] = field(default_factory=dict)  # every entity's display name and aliases after the pass
    own: dict[str, Names] = field(default_factory=dict)  # those of the entities this plan renders
    widen: str = ""  # why a scoped pass must run in full instead; nothing else of the plan is complete then
    # A mirrored file's base should its memory write be refused: the file as this pass read it (see ``kept_upserts``).
    read_bases: dict[str, BaseEntry] = field(default_factory=dict)


def display_name(content: EntityContent | None, wrapper: dict[str, Any], rel: str) -> str:
    heading = first_h1(content.body) if content else None
    if heading:
        return heading
    for key in ("name", "entity", "title"):
        value = wrapper.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return slug_of(rel)


def tag_for(kind: str) -> str:
    name = TAG_NAMES.get(kind) or (kind[:-1] if kind.endswith("s") and len(kind) > 3 else kind)
    return "memory/" + re.sub(r"[^\w/-]+", "-", name).strip("-").lower()


def summary_bytes(content: EntityContent | None, old: Summary | None) -> bytes:
    """summary.md for ``content``, keeping the original frontmatter text, BOM and line endings.

    The line endings are the memory file's own, whatever the note's are (a sync app may convert a whole vault to
    CRLF): CRLF where summary.md has them, LF otherwise, a new file included."""
    content = content or EntityContent({}, "")
    if not content.props:
        text = content.body
    elif old and old.fm_text is not None and canonical(parse_properties(old.fm_text)) == canonical(content.props):
        text = f"---\n{old.fm_text}---\n{content.body}"
    else:
        text = f"---\n{dump_properties(content.props, date_keys=DATE_KEYS)}---\n{content.body}"
    text = text.replace("\r\n", "\n")
    if old and newline_of(old.raw.decode()) == "\r\n":
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if old and old.bom else "") + text).encode()


class PlanTarget:
    """The state both sides should hold after the pass, and the actions collected so far: what the vault side
    (``plan_vault.py``) and the memory side (``plan_memory.py``) of the planner share."""

    def __init__(
        self,
        cfg: Config,
        layout: VaultLayout,
        world: World,
        mem: MemoryScan,
        vault: VaultScan,
        base: dict[str, BaseEntry],
        context: Context | Planned | None = None,
    ) -> None:
        self.cfg = cfg
        self.context = context
        self.base = base
        self.fact_derived: dict[str, dict[str, Any]] = {}  # fact key -> derived properties rendered this pass
        self.layout = layout
        self.world = world
        self.mem = mem
        self.vault = vault
        self.plan = Plan()
        self.final_facts: dict[str, dict[str, Record]] = {}
        self.final_content: dict[str, EntityContent | None] = {}
        self.final_files: dict[str, bytes] = {}
        self.skipped: set[str] = set()
        self.derived: dict[str, dict[str, Any]] = {}  # rel -> derived properties rendered this pass
        self.positions: dict[str, int] = {}  # fact key -> its position in items.json after the pass

    # -- the target state ----------------------------------------------------------------------------
    def target(self) -> None:
        for key, state in self.world.units.items():
            decision = state.decision
            assert decision is not None
            if decision.outcome is Outcome.SKIP:
                self.skipped.add(key)
                value = state.memory if state.memory is not UNKNOWN else state.base
            else:
                value = decision.result
            if state.kind == FACT:
                rel, note = split_fact_key(key)
                if value is not None:
                    self.final_facts.setdefault(rel, {})[note] = value
            elif state.kind == ENTITY:
                self.final_content[rel_of(key)] = value
            elif value is not None:
                self.final_files[mem_path_of(key)] = value

    def exists(self, rel: str) -> bool:
        return self.final_content.get(rel) is not None or bool(self.final_facts.get(rel))

    def entities(self) -> list[str]:
        return sorted(r for r in set(self.final_content) | set(self.final_facts) if self.exists(r))

    def wrapper(self, rel: str) -> dict[str, Any]:
        entity = self.mem.entities.get(rel)
        return entity.doc.wrapper if entity and entity.doc else {}

    # -- helpers -------------------------------------------------------------------------------------
    def add(
        self,
        side: str,
        op: str,
        path: Path | str,
        data: bytes | None,
        expected: Any,
        keys: tuple[str, ...],
        *,
        keep_old: bool = False,
    ) -> None:
        if side == "vault":
            shown = str(path)
            path = self.cfg.vault / shown
        else:
            path = Path(path)
            shown = memory_shown(self.cfg, path)
        self.plan.actions.append(Action(side, op, path, shown, data, expected, keys, keep_old=keep_old))

    def conflicts(self, stamp: str) -> None:
        for key, state in self.world.units.items():
            decision = state.decision
            if decision is None or decision.outcome is not Outcome.CONFLICT or state.vault_note is None:
                continue
            copy = conflict_copy_name(state.vault_note.path, stamp)
            n = 1
            # The copies the scan found stand for the vault: the plan reads no file (the write itself refuses
            # to replace one that appeared since).
            taken = set(self.vault.conflict_copies)
            while copy in taken or any(c.copy_path == copy for c in self.plan.conflicts):
                n += 1  # two passes in one second (a watcher): each keeps its own copy
                copy = conflict_copy_name(state.vault_note.path, f"{stamp}-{n}")
            self.add("vault", "write", copy, state.vault_note.raw, None, (key,))
            self.plan.conflicts.append(Conflict(key, scope_of(key), decision.detail, copy))

    def base_updates(self) -> None:
        base = self.base
        for key, state in self.world.units.items():
            if key in self.skipped:
                continue
            assert state.decision is not None
            result = state.decision.result
            if state.kind == FILE and isinstance(state.memory, bytes) and result != state.memory:
                self.plan.read_bases[key] = BaseEntry(encode_base(FILE, state.memory), {})
            if result is None:
                if key in base:
                    self.plan.deletes.append(key)
                continue
            extra: dict[str, Any] = {}
            if state.kind == FACT:
                extra["index"] = self.positions.get(key, -1)
                extra["derived"] = self.fact_derived.get(key, {})
            elif state.kind == ENTITY:
                extra["derived"] = self.derived.get(rel_of(key), {})
            entry = BaseEntry(encode_base(state.kind, result), extra)
            old = base.get(key)
            if old is None or old.data != entry.data or old.extra != entry.extra:
                self.plan.upserts[key] = entry


def canonical_content(content: Any) -> str:
    if content is None or content is UNKNOWN:
        return ""
    return canonical(plain(content))


def memory_shown(cfg: Config, path: Path) -> str:
    for root, label in ((cfg.workspace, "workspace"), (cfg.life, "life")):
        try:
            return f"{label}/{path.relative_to(root).as_posix()}"
        except ValueError:
            continue
    return str(path)
