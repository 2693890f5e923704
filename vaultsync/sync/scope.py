"""Which units a pass has to read, from what the quick check saw change since the last settled pass.

A scoped pass reads, merges and writes only the entities and files the change touches; every other unit is as
the last settled pass left it, on both sides, so its base is its content. What it needs of the others (their
names and aliases for links and mentions, the names of all notes for link uniqueness) comes from the snapshot
and the base. Anything it cannot place with certainty widens it to a full pass, which is always correct: a new
entity folder, a file or note outside the known places, an ignored folder, too many changes, and (found while
planning) an entity created, deleted or renamed, or a note name that makes a short link ambiguous.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vaultsync.names import daily_date, fold
from vaultsync.sync.snapshot import Seen
from vaultsync.sync.units import CREATABLE
from vaultsync.vault.layout import VaultLayout, slug_of, split_fact_key
from vaultsync.vault.scan import CONFLICT_MARK

SCOPE_MAX = 200  # more entities and files than this: a full pass costs about the same and sees more
ITEMS, SUMMARY = "items.json", "summary.md"

Names = tuple[str, tuple[str, ...]]  # an entity's display name and its own aliases


@dataclass(frozen=True)
class Scope:
    rels: frozenset[str]  # entities to read
    files: frozenset[str]  # memory paths of files to read

    def base_keys(self, keys: Iterable[str]) -> list[str]:
        """The base units this scope covers."""
        found = []
        for key in keys:
            kind, _, rest = key.partition(":")
            if kind == "file":
                if rest in self.files:
                    found.append(key)
            elif (split_fact_key(key)[0] if kind == "fact" else rest) in self.rels:
                found.append(key)
        return found

    def reads(self, layout: VaultLayout) -> Callable[[str], bool]:
        """Whether a scoped pass over this scope reads the vault path it is given."""
        dirs = {layout.entity_dir(rel): f"{slug_of(rel)}.md" for rel in self.rels}
        facts = {layout.facts_dir(rel) for rel in self.rels}
        notes = {layout.file_note(m) for m in self.files}

        def read(path: str) -> bool:
            parent, _, name = path.rpartition("/")
            if path in notes or parent in facts:
                return True
            return parent in dirs and (name == dirs[parent] or CONFLICT_MARK in name)

        return read


def narrow(seen: Seen, layout: VaultLayout, base_keys: Iterable[str], entities: Mapping[str, Any]) -> Scope | None:
    """The scope covering every change ``seen`` lists; None when a full pass must run."""
    if seen.odd:
        return None
    files = {key[len("file:") :] for key in base_keys if key.startswith("file:")}
    rels: set[str] = set()
    scoped: set[str] = set()
    for key in seen.memory:
        folder, _, name = key.rpartition("/")
        rel = folder.removeprefix("life/")
        if key.startswith("life/") and name in (ITEMS, SUMMARY) and rel in entities:
            rels.add(rel)
        elif key in files or key in CREATABLE or _new_daily(key):
            scoped.add(key)
        else:
            return None
    daily = layout.layout.daily + "/"
    for path in seen.vault:
        parent, _, name = path.rpartition("/")
        if CONFLICT_MARK in name:
            continue  # a copy is no unit; one deleted resolves its conflict, which the store knows of
        mem_path = layout.file_for_note(path)
        if mem_path and (
            mem_path in files or mem_path in CREATABLE or (path.startswith(daily) and _new_daily(mem_path))
        ):
            scoped.add(mem_path)
            continue
        rel = layout.entity_rel_of_dir(parent)
        if rel in entities and name == f"{slug_of(rel)}.md":
            rels.add(rel)
            continue
        owner = layout.entity_rel_of_dir(parent.removesuffix("/facts")) if parent.endswith("/facts") else None
        if owner in entities and name.endswith(".md"):
            rels.add(owner)
            continue
        return None
    if len(rels) + len(scoped) > SCOPE_MAX:
        return None
    return Scope(frozenset(rels), frozenset(scoped))


def _new_daily(mem_path: str) -> bool:
    name = mem_path.removeprefix("workspace/memory/")
    return name != mem_path and "/" not in name and daily_date(name) is not None


class Context:
    """The rest of the vault as a scoped pass sees it: names of the entities and notes it does not read."""

    def __init__(
        self, scope: Scope, layout: VaultLayout, base_keys: Iterable[str], entities: Mapping[str, Any]
    ) -> None:
        self.scope = scope
        self.names: dict[str, Names] = {}  # every entity's, as the last settled pass named it
        for rel, value in entities.items():
            name, aliases = value
            self.names[rel] = (str(name), tuple(str(a) for a in aliases))
        self.outside: list[str] = []  # note paths of units out of scope
        self.inside: set[str] = set()  # note paths of units in scope, before the pass
        for rel in self.names:
            target = self.inside.add if rel in scope.rels else self.outside.append
            target(layout.entity_note(rel))
        for key in base_keys:
            kind, _, rest = key.partition(":")
            if kind == "fact":
                rel, note = split_fact_key(key)
                target = self.inside.add if rel in scope.rels else self.outside.append
                target(layout.fact_note(rel, note))
            elif kind == "file":
                path = layout.file_note(rest)
                if path:
                    target = self.inside.add if rest in scope.files else self.outside.append
                    target(path)

    def widen(self, names: Mapping[str, Names], inside: Iterable[str]) -> str:
        """Why the scoped pass must become a full one ("" when it need not).

        ``names`` and ``inside`` are the scoped entities' names and note paths as the pass would leave them.
        Another entity's links, mentions and related list depend on them only through names and note names.
        """
        for rel in self.scope.rels | set(names):
            if names.get(rel) != self.names.get(rel):
                return f"entity {rel} was created, deleted or renamed"
        after = set(inside)
        moved = after ^ self.inside
        if not moved:
            return ""
        stems = Counter(_stem(p) for p in self.outside)
        before = stems + Counter(_stem(p) for p in self.inside)
        now = stems + Counter(_stem(p) for p in after)
        for stem in {_stem(p) for p in moved}:
            if before[stem] > 1 or now[stem] > 1:
                return f"a note named {stem!r} changes which links are short"
        return ""


def _stem(path: str) -> str:
    return fold(path.rsplit("/", 1)[-1].removesuffix(".md"))
