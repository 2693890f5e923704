"""The memory side of a plan: the person's edits carried into ``items.json`` (spliced, keeping the file's style),
``summary.md`` and the mirrored files."""

from __future__ import annotations

from pathlib import Path

from vaultsync.core.decide import UNKNOWN
from vaultsync.core.plan import PlanTarget, canonical_content, summary_bytes
from vaultsync.keys import FILE, entity_key, fact_key, mem_path_of
from vaultsync.memory.items_edit import (
    AppendEntry,
    DeleteEntry,
    Edit,
    RemoveFields,
    SetFields,
    apply_edits,
    new_items_file,
)
from vaultsync.memory.tree import MemEntity
from vaultsync.model import Problem, Record, Severity, canonical


class MemorySide(PlanTarget):
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
        alive = self.exists(rel)
        if entity is None or not entity.broken:
            self._memory_items(rel, entity, alive)
        self._memory_summary(rel, entity, alive)

    def _memory_items(self, rel: str, entity: MemEntity | None, alive: bool) -> None:
        """The entity's ``items.json``: spliced entry by entry when it exists, so the file keeps its style."""
        folder = self.cfg.life / rel
        current = self.world.mem_facts.get(rel, {})
        final = self.final_facts.get(rel, {})
        edits, order = self._fact_edits(rel, current, final)
        for position, note in enumerate(order):
            self.positions[fact_key(rel, note)] = position
        keys = tuple(fact_key(rel, n) for n in set(current) | set(final))
        unshown = _unshown(entity, current, self.skipped) if entity else 0
        if entity and entity.doc and not alive and not unshown:
            self.add("memory", "delete", folder / "items.json", None, entity.items_raw, keys)
        elif entity and entity.doc and not alive:
            # The entity is gone from the vault, but the file holds facts the vault never showed (an unsafe
            # id, not an object, unreadable): the person could not have meant to delete those.
            if edits:
                data = apply_edits(entity.doc, edits)
                self.add("memory", "write", folder / "items.json", data, entity.items_raw, keys, keep_old=True)
                why = f"{unshown} fact(s) never shown in the vault (see the errors about them) are kept in it"
                self.plan.problems.append(
                    Problem(str(folder / "items.json"), f"{why}; fix or delete them there", Severity.WARNING)
                )
        elif edits and entity and entity.doc:
            data = apply_edits(entity.doc, edits)
            keep_old = any(isinstance(e, DeleteEntry) for e in edits)
            self.add("memory", "write", folder / "items.json", data, entity.items_raw, keys, keep_old=keep_old)
        elif edits and final:
            data = new_items_file([final[n] for n in order])
            expected = entity.items_raw if entity else None
            fact_keys = tuple(fact_key(rel, n) for n in final)
            self.add("memory", "write", folder / "items.json", data, expected, fact_keys)

    def _fact_edits(
        self, rel: str, current: dict[str, tuple[int, Record]], final: dict[str, Record]
    ) -> tuple[list[Edit], list[str]]:
        """The edits that turn the file's facts into the final ones, and the facts' order in the result: kept
        and changed facts where they stood, new ones at the end."""
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
        return edits, order

    def _memory_summary(self, rel: str, entity: MemEntity | None, alive: bool) -> None:
        """The entity's ``summary.md``: written from the final content, or deleted with the entity."""
        key = entity_key(rel)
        if key in self.skipped:
            return
        summary = entity.summary if entity else None
        current_content = self.world.units[key].memory if key in self.world.units else None
        final_content = self.final_content.get(rel)
        if canonical_content(current_content) == canonical_content(final_content) and (alive or summary is None):
            return
        path = self.cfg.life / rel / "summary.md"
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


def _unshown(entity: MemEntity, current: dict[str, tuple[int, Record]], skipped: set[str]) -> int:
    """How many facts of the entity's file no note stands for this pass: entries that are not readable facts,
    and readable ones whose unit was skipped."""
    if entity.doc is None:
        return 0
    held = sum(1 for note in current if fact_key(entity.rel, note) in skipped)
    return len(entity.doc.entries) - len(current) + held
