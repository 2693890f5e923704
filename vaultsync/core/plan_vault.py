"""The vault side of a plan: every note rendered from the merged memory state, written only when what it means
changed; entity links and mentions resolved against every entity's names."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from vaultsync.core.plan import ISO_DAY, PlanTarget, display_name, tag_for
from vaultsync.core.scope import Names
from vaultsync.core.world import Minted
from vaultsync.keys import FILE, entity_key, fact_key, mem_path_of
from vaultsync.model import EntityContent, Problem, Record, Severity, canonical
from vaultsync.vault.layout import slug_of
from vaultsync.vault.links import LinkIndex, MentionMatcher, mention_strings
from vaultsync.vault.notes import (
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


class VaultSide(PlanTarget):
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
                settings = self.layout.layout
                view = FactView(
                    entity_link(rel),
                    tuple(mentions_of[note]),
                    superseded,
                    settings.daily,
                    settings.fact_text_property,
                    links.has,  # a day whose daily note is not in the vault gets no link (``daily_link``)
                )
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
        # A date by definition (the day of the newest fact), typed `date` in Obsidian: a time would be cut off by
        # its date picker, so none is shown; the facts' own timestamps keep theirs.
        dates = [
            v[:10]
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
            if not self._taken(minted):
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
        text = self.layout.layout.fact_text_property
        current = self.vault.entities.get(rel)
        existing = current.note if current else None
        target = self.layout.entity_note(rel)
        if existing is not None and existing.path != target:
            # The person renamed the note (``vault/scan.py``): it goes back to its name, which links rely on.
            note = render_entity(content, derived, self.layout.facts_dir(rel), text).encode()
            self.add("vault", "write", target, note, None, (key,))
            self.add("vault", "delete", existing.path, None, existing.raw, (key,))
            return
        if existing is not None:
            props = entity_properties(content, derived)
            view_current = facts_view(self.layout.facts_dir(rel), text) in existing.raw.decode(errors="replace")
            if same_value(props, existing.props) and content.body == existing.body and view_current:
                return
        rendered = render_entity(content, derived, self.layout.facts_dir(rel), text)
        self.add("vault", "write", target, rendered.encode(), existing.raw if existing else None, (key,))

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
        for key, minted in self.world.minted.items():
            # A renamed note of a fact the agent deleted meanwhile goes with it (its move is not an edit).
            gone = minted.note_id not in self.final_facts.get(minted.rel, {})
            if key not in self.skipped and gone and not self._taken(minted):
                self.add("vault", "delete", minted.old_path, None, minted.old_raw, (key,))

    def _minted_paths(self) -> set[str]:
        return {m.old_path for m in self.world.minted.values()}

    def _taken(self, minted: Minted) -> bool:
        """The renamed note's old place is another fact's note, written over it (``core/vault_facts._collides``):
        no deletion of it, which would remove that fact's note."""
        stem = minted.old_path.rsplit("/", 1)[-1].removesuffix(".md")
        live = self.final_facts.get(minted.rel, {})
        return stem in live and self.layout.fact_note(minted.rel, stem) == minted.old_path

    def _vault_files(self) -> None:
        for key, state in self.world.units.items():
            if state.kind != FILE or key in self.skipped:
                continue
            mem_path = mem_path_of(key)
            # A note is written where it is (a daily note in a date sub-folder), a new one where the config says.
            path = state.vault_note.path if state.vault_note else self.layout.file_note(mem_path)
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


def _mention_names(names: dict[str, Names]) -> list[tuple[str, str]]:
    return [(v, rel) for rel, (name, aliases) in names.items() for v in mention_strings(name, aliases)]
