"""From decisions to a plan: the state both sides should hold, and the plain actions that get them there.

The plan is computed in full before anything is written, so ``--dry-run`` can print it and the safety guard
can refuse it. Every vault note is rendered from the merged memory state; a note is written only when what
it means (its properties as values and its body) differs from what is on disk, so Obsidian's own
re-formatting never causes a rewrite.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.core.decide import UNKNOWN, Outcome
from vaultsync.core.scope import Context, Names, Planned
from vaultsync.core.units import World, encode_base, plain
from vaultsync.keys import ENTITY, FACT, FILE, entity_key, fact_key, kind_of, mem_path_of, rel_of, split_fact_key
from vaultsync.memory.items_edit import (
    AppendEntry,
    DeleteEntry,
    Edit,
    RemoveFields,
    SetFields,
    apply_edits,
    new_items_file,
)
from vaultsync.memory.tree import MemoryScan, Summary
from vaultsync.model import PARA_KEYS, Change, Conflict, EntityContent, Problem, Record, Severity, canonical
from vaultsync.state.base import BaseEntry
from vaultsync.textio import newline_of
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.links import LinkIndex, MentionMatcher, mention_strings
from vaultsync.vault.notes import (
    DATE_KEYS,
    FACT_DERIVED,
    FactView,
    entity_properties,
    fact_body,
    fact_properties,
    facts_view,
    render_entity,
    render_fact,
    same_value,
)
from vaultsync.vault.scan import VaultScan, conflict_copy_name
from vaultsync.yamlcore import parse_properties
from vaultsync.yamldump import dump_properties

H1 = re.compile(r"^# +(.+?)\s*#*\s*$", re.MULTILINE)
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
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    person_paths: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    keep_dirs: set[Path] = field(default_factory=set)  # never removed when a deletion empties them
    names: dict[str, Names] = field(default_factory=dict)  # every entity's display name and aliases after the pass
    own: dict[str, Names] = field(default_factory=dict)  # those of the entities this plan renders
    widen: str = ""  # why a scoped pass must run in full instead; nothing else of the plan is complete then


def display_name(content: EntityContent | None, wrapper: dict[str, Any], rel: str) -> str:
    m = H1.search(content.body) if content else None
    if m:
        return m.group(1).strip()
    for key in ("name", "entity", "title"):
        value = wrapper.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return slug_of(rel)


def tag_for(kind: str) -> str:
    name = TAG_NAMES.get(kind) or (kind[:-1] if kind.endswith("s") and len(kind) > 3 else kind)
    return "memory/" + re.sub(r"[^\w/-]+", "-", name).strip("-").lower()


def summary_bytes(content: EntityContent | None, old: Summary | None) -> bytes:
    """summary.md for ``content``, keeping the original frontmatter text, BOM and line endings."""
    content = content or EntityContent({}, "")
    if not content.props:
        text = content.body
    elif old and old.fm_text is not None and canonical(parse_properties(old.fm_text)) == canonical(content.props):
        text = f"---\n{old.fm_text}---\n{content.body}"
    else:
        text = f"---\n{dump_properties(content.props, date_keys=DATE_KEYS)}---\n{content.body}"
    if old and newline_of(old.raw.decode()) == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return (("\ufeff" if old and old.bom else "") + text).encode()


class Planner:
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

    # -- the vault side ------------------------------------------------------------------------------
    def names_and_notes(self) -> tuple[list[str], dict[str, Names], list[str]]:
        """The entities to render, their display names and aliases, and the paths of every note this plan holds."""
        rels = self.entities()
        own = {rel: (self._name(rel), self._aliases(rel)) for rel in rels}
        note_paths = [self.layout.entity_note(r) for r in rels]
        note_paths += [self.layout.fact_note(r, n) for r in rels for n in self.final_facts.get(r, {})]
        note_paths += [p for p in map(self.layout.file_note, self.final_files) if p]
        return rels, own, note_paths

    def vault_side(self) -> None:
        rels, own, note_paths = self.names_and_notes()
        self.plan.names = self.plan.own = own
        if self.context is None:
            links = LinkIndex(note_paths)
        else:
            # The other entities are as the last settled pass left them, or as a first import will write them.
            self.plan.widen = self.context.widen(own, note_paths)
            if self.plan.widen:
                return
            self.plan.names = dict(sorted(self.context.named(own).items()))  # the order a full pass has
            links = self.context.links(note_paths)
        names = self.plan.names

        @functools.cache
        def entity_link(rel: str) -> str:  # asked only for the entities named (a scoped pass reads a few)
            return links.link(self.layout.entity_note(rel), names[rel][0])

        matcher = MentionMatcher(_mention_names(self.plan.names))

        for rel in rels:
            facts = self.final_facts.get(rel, {})
            mentions_of: dict[str, list[str]] = {}
            related: set[str] = set()
            for note, record in facts.items():
                text = record.get("fact")
                found = matcher.find(text) - {rel} if isinstance(text, str) else set()
                mentions_of[note] = sorted(entity_link(r) for r in found)
                if record.get("status") == "active":
                    related.update(mentions_of[note])
            by_id = {r.get("id"): n for n, r in facts.items() if isinstance(r.get("id"), str)}

            def superseded(fact_id: str, rel: str = rel, by_id: dict[Any, str] = by_id) -> str | None:
                note = by_id.get(fact_id)
                return links.link(self.layout.fact_note(rel, note)) if note else None

            for note, record in facts.items():
                view = FactView(entity_link(rel), tuple(mentions_of[note]), superseded)
                props = fact_properties(record, view)
                self.fact_derived[fact_key(rel, note)] = {k: props[k] for k in FACT_DERIVED if k in props}
                self._fact_note(rel, note, record, view, props)
            derived = self._derived(rel, own[rel][0], facts, sorted(related))
            self._entity_note(rel, derived)
        self._vault_deletions(set(rels))
        self._vault_files()

    def _name(self, rel: str) -> str:
        return display_name(self.final_content.get(rel), self.wrapper(rel), rel)

    def _aliases(self, rel: str) -> tuple[str, ...]:
        content = self.final_content.get(rel)
        aliases = content.props.get("aliases") if content else None
        return tuple(a for a in aliases if isinstance(a, str)) if isinstance(aliases, list) else ()

    def _derived(self, rel: str, name: str, facts: dict[str, Record], related: list[str]) -> dict[str, Any]:
        parts = rel.split("/")
        kind = parts[-2] if len(parts) > 2 else parts[0]
        statuses = Counter(r.get("status") for r in facts.values())
        derived: dict[str, Any] = {"kind": kind}
        if name != slug_of(rel):
            derived["aliases"] = [name]
        derived["tags"] = [tag_for(kind)]
        derived["facts_active"] = statuses["active"]
        derived["facts_superseded"] = statuses["superseded"]
        derived["related"] = related
        dates = [
            v
            for r in facts.values()
            for v in (r.get("timestamp"), r.get("date"))
            if isinstance(v, str) and ISO_DAY.match(v)
        ]
        if dates:
            derived["updated"] = max(dates)
        self.derived[rel] = derived
        return derived

    def _fact_note(self, rel: str, note: str, record: Record, view: FactView, props: dict[str, Any]) -> None:
        """Write the note only when what it means changed; comparing values spares rendering and re-reading."""
        key = fact_key(rel, note)
        if key in self.skipped:
            return
        path = self.layout.fact_note(rel, note)
        minted = self.world.minted.get(key)
        current = self.vault.entities.get(rel)
        existing = current.facts.get(note) if current else None
        if minted:
            text = render_fact(record, view, props).encode()
            self.add("vault", "write", path, text, existing.raw if existing else None, (key,))
            self.add("vault", "delete", minted.old_path, None, minted.old_raw, (key,))
            return
        if existing is not None:
            if existing.broken:
                return
            if same_value(props, existing.props) and fact_body(record) == existing.body:
                return
            self._derived_edits(key, existing.path, existing.props)
        text = render_fact(record, view, props)
        self.add("vault", "write", path, text.encode(), existing.raw if existing else None, (key,))

    def _derived_edits(self, key: str, path: str, props: dict[str, Any]) -> None:
        """Say so when a person edited a property vaultsync computes: the rewrite puts it back."""
        entry = self.base.get(key)
        before = entry.extra.get("derived") if entry else None
        if before is None:
            return
        for name in FACT_DERIVED:
            if name in props and canonical(props[name]) != canonical(before.get(name)):
                self.plan.problems.append(
                    Problem(path, f"'{name}' is computed from the memory; the edit was replaced", Severity.WARNING)
                )

    def _entity_note(self, rel: str, derived: dict[str, Any]) -> None:
        key = entity_key(rel)
        if key in self.skipped:
            return
        content = self.final_content.get(rel) or EntityContent({}, "")
        current = self.vault.entities.get(rel)
        existing = current.note if current else None
        if existing is not None:
            props = entity_properties(content, derived)
            view_current = facts_view(self.layout.facts_dir(rel)) in existing.raw.decode(errors="replace")
            if same_value(props, existing.props) and content.body == existing.body and view_current:
                return
        text = render_entity(content, derived, self.layout.facts_dir(rel))
        self.add(
            "vault",
            "write",
            self.layout.entity_note(rel),
            text.encode(),
            existing.raw if existing else None,
            (key,),
        )

    def _vault_deletions(self, alive: set[str]) -> None:
        for rel, ventity in self.vault.entities.items():
            if rel in self.world.unreadable:
                continue  # its facts are unknown: no note of it is extra, whether synced or new
            for note, fact_note in ventity.facts.items():
                key = fact_key(rel, note)
                if key in self.skipped or fact_note.broken or key in self.world.minted:
                    continue
                if note not in self.final_facts.get(rel, {}) and fact_note.path not in self._minted_paths():
                    self.add("vault", "delete", fact_note.path, None, fact_note.raw, (key,))
            if rel not in alive and ventity.note is not None and entity_key(rel) not in self.skipped:
                self.add("vault", "delete", ventity.note.path, None, ventity.note.raw, (entity_key(rel),))

    def _minted_paths(self) -> set[str]:
        return {m.old_path for m in self.world.minted.values()}

    def _vault_files(self) -> None:
        for key, state in self.world.units.items():
            if state.kind != FILE or key in self.skipped:
                continue
            mem_path = mem_path_of(key)
            path = self.layout.file_note(mem_path)
            if path is None:
                continue
            final = self.final_files.get(mem_path)
            current = state.vault_note.raw if state.vault_note else None
            if final == current:
                continue
            if final is None:
                self.add("vault", "delete", path, None, current, (key,))
            else:
                self.add("vault", "write", path, final, current, (key,))

    # -- the memory side -----------------------------------------------------------------------------
    def memory_side(self) -> None:
        for rel in sorted(set(self.mem.entities) | set(self.final_content) | set(self.final_facts)):
            self._memory_entity(rel)
        for key, state in self.world.units.items():
            if state.kind != FILE or key in self.skipped:
                continue
            mem_path = mem_path_of(key)
            final = self.final_files.get(mem_path)
            current = state.memory if state.memory is not UNKNOWN else None
            if final == current:
                continue
            path = self.memory_path(mem_path)
            if final is None:
                self.add("memory", "delete", path, None, current, (key,))
            else:
                self.add("memory", "write", path, final, current, (key,))

    def memory_path(self, mem_path: str) -> Path:
        root, _, rest = mem_path.partition("/")
        return (self.cfg.workspace if root == "workspace" else self.cfg.life) / rest

    def _memory_entity(self, rel: str) -> None:
        entity = self.mem.entities.get(rel)
        folder = self.cfg.life / rel
        alive = self.exists(rel)
        fact_keys = tuple(fact_key(rel, n) for n in self.final_facts.get(rel, {}))
        if entity is None or not entity.broken:
            current = self.world.mem_facts.get(rel, {})
            final = self.final_facts.get(rel, {})
            edits: list[Edit] = []
            order: list[str] = []
            for note, (index, record) in sorted(current.items(), key=lambda item: item[1][0]):
                if fact_key(rel, note) in self.skipped:
                    order.append(note)
                    continue
                if note not in final:
                    edits.append(DeleteEntry(index))
                    continue
                order.append(note)
                new = final[note]
                if new is record:  # the unit did not change: the decision handed back memory's own record
                    continue
                changed = {k: v for k, v in new.items() if k not in record or canonical(record[k]) != canonical(v)}
                removed = tuple(k for k in record if k not in new)
                if changed:
                    edits.append(SetFields(index, changed))
                if removed:
                    edits.append(RemoveFields(index, removed))
            for note, record in final.items():
                # A skipped fact missing from the file is one the file holds but could not be read: not new.
                if note not in current and fact_key(rel, note) not in self.skipped:
                    edits.append(AppendEntry(record))
                    order.append(note)
            for position, note in enumerate(order):
                self.positions[fact_key(rel, note)] = position
            keys = tuple(fact_key(rel, n) for n in set(current) | set(final))
            if entity and entity.doc and not alive:
                self.add("memory", "delete", folder / "items.json", None, entity.items_raw, keys)
            elif edits and entity and entity.doc:
                data = apply_edits(entity.doc, edits)
                keep_old = any(isinstance(e, DeleteEntry) for e in edits)
                self.add("memory", "write", folder / "items.json", data, entity.items_raw, keys, keep_old=keep_old)
            elif edits and final:
                data = new_items_file([final[n] for n in order])
                expected = entity.items_raw if entity else None
                self.add("memory", "write", folder / "items.json", data, expected, fact_keys)
        key = entity_key(rel)
        if key in self.skipped:
            return
        summary = entity.summary if entity else None
        current_content = self.world.units[key].memory if key in self.world.units else None
        final_content = self.final_content.get(rel)
        if canonical_content(current_content) == canonical_content(final_content) and (alive or summary is None):
            return
        path = folder / "summary.md"
        if not alive:
            if summary is not None:
                self.add("memory", "delete", path, None, summary.raw, (key,))
        elif final_content is not None or summary is not None:
            self.add(
                "memory",
                "write",
                path,
                summary_bytes(final_content, summary),
                summary.raw if summary else None,
                (key,),
                # The summary deleted in the vault while the entity lives on through its facts: the file is
                # emptied, so the agent's text goes to the trash first, as a deleted file's would.
                keep_old=final_content is None and summary is not None,
            )

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
            shown = _memory_shown(self.cfg, path)
        self.plan.actions.append(Action(side, op, path, shown, data, expected, keys, keep_old=keep_old))

    def conflicts(self, stamp: str) -> None:
        for key, state in self.world.units.items():
            decision = state.decision
            if decision is None or decision.outcome is not Outcome.CONFLICT or state.vault_note is None:
                continue
            copy = conflict_copy_name(state.vault_note.path, stamp)
            n = 1
            while (self.cfg.vault / copy).exists() or any(c.copy_path == copy for c in self.plan.conflicts):
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


def _mention_names(names: dict[str, Names]) -> list[tuple[str, str]]:
    return [(v, rel) for rel, (name, aliases) in names.items() for v in mention_strings(name, aliases)]


def canonical_content(content: Any) -> str:
    if content is None or content is UNKNOWN:
        return ""
    return canonical(plain(content))


def _memory_shown(cfg: Config, path: Path) -> str:
    for root, label in ((cfg.workspace, "workspace"), (cfg.life, "life")):
        try:
            return f"{label}/{path.relative_to(root).as_posix()}"
        except ValueError:
            continue
    return str(path)


def scope_of(key: str) -> str:
    kind = kind_of(key)
    if kind in (FACT, ENTITY):
        rel = rel_of(key)
        rest = rel.partition("/")[2]
        return rest if "/" in rest else rel
    mem_path = mem_path_of(key)
    name = mem_path.rsplit("/", 1)[-1]
    if mem_path.startswith("workspace/memory/archive/"):
        return "archive " + mem_path.removeprefix("workspace/memory/archive/")
    if (
        mem_path.startswith("workspace/memory/")
        and mem_path.count("/") == 2
        and re.match(r"\d{4}-\d{2}-\d{2}\.md$", name)
    ):
        return "daily " + name[:-3]
    if mem_path.startswith("workspace/") and mem_path.count("/") == 1:
        return name
    return mem_path


def make_plan(
    cfg: Config,
    layout: VaultLayout,
    world: World,
    mem: MemoryScan,
    vault: VaultScan,
    base: dict[str, BaseEntry],
    stamp: str,
    context: Context | Planned | None = None,
) -> Plan:
    """The plan for the units of ``world``; with ``context``, a scoped pass's, whose other entities are unread."""
    planner = Planner(cfg, layout, world, mem, vault, base, context)
    planner.plan.keep_dirs = {cfg.workspace, cfg.workspace / "memory", cfg.life, cfg.vault}
    planner.plan.keep_dirs |= {cfg.life / para for para in PARA_KEYS}
    planner.plan.keep_dirs |= {cfg.vault / folder for folder in (*cfg.layout.para_folders().values(), cfg.layout.daily)}
    planner.target()
    planner.conflicts(stamp)  # first: a note is overwritten only once the copy of the person's version is safe
    planner.vault_side()
    if planner.plan.widen:
        return planner.plan
    planner.memory_side()
    planner.base_updates()
    return planner.plan
