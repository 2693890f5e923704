"""Which units a pass has to read, from what the quick check saw change since the last settled pass.

A scoped pass reads, merges and writes only the entities and files the change touches; every other unit is as
the last settled pass left it, on both sides, so its base is its content. What it needs of the others (their
names and aliases for links and mentions, the names of all notes for link uniqueness) comes from the snapshot
and the base. An entity created, renamed or deleted changes what other entities' facts link to, but only those
whose text holds one of its names, old or new; the base's fact texts say which, and the pass reads them too.
Anything it cannot place with certainty widens it to a full pass, which is always correct: a new entity folder
(a moved one's new place included) anywhere but beside known ones, a file or note outside the known places, an
ignored folder, too many changes, and (found while planning) every entity gone from a side, or a note name that
makes a short link ambiguous.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from vaultsync.core.units import CREATABLE
from vaultsync.keys import is_fact, rel_of, split_fact_key
from vaultsync.names import daily_date, fold, name_problem
from vaultsync.state.snapshot import QuickFindings
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.vault.links import LinkIndex, mention_strings, note_stem
from vaultsync.vault.notes import source_day
from vaultsync.vault.scan import CONFLICT_MARK


class BaseIndex(Protocol):
    """What the scoped decision asks of the base, answered by the engine's store (``state/base.py``): the core
    names the question and never opens the database itself."""

    def facts(self) -> Iterator[tuple[str, bytes]]: ...

    def stem_count(self, stem: str) -> int: ...


SCOPE_MAX = 200  # more entities and files than this: a full pass costs about the same and sees more
ITEMS, SUMMARY = "items.json", "summary.md"

Names = tuple[str, tuple[str, ...]]  # an entity's display name and its own aliases


@dataclass(frozen=True)
class Scope:
    rels: frozenset[str]  # entities to read
    files: frozenset[str]  # memory paths of files to read
    created: frozenset[str] = frozenset()  # of ``rels``, those the last settled pass did not know

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


def narrow(
    seen: QuickFindings, layout: VaultLayout, files: Collection[str], entities: Mapping[str, Any]
) -> Scope | None:
    """The scope covering every change ``seen`` lists (``files``: the memory paths of the base's file units);
    None when a full pass must run."""
    if seen.odd:
        return None
    rels: set[str] = set()
    scoped: set[str] = set()
    fresh = _Fresh(entities, layout)
    for key in seen.memory:
        folder, _, name = key.rpartition("/")
        rel = folder.removeprefix("life/")
        if key.startswith("life/") and name in (ITEMS, SUMMARY) and (rel in entities or fresh.entity(rel)):
            rels.add(rel)
        elif key in files or key in CREATABLE or _new_daily(key):
            scoped.add(key)
        else:
            return None
    for path in seen.vault:
        parent, _, name = path.rpartition("/")
        if CONFLICT_MARK in name:
            continue  # a copy is no unit; one deleted resolves its conflict, which the store knows of
        mem_path = layout.file_for_note(path)
        if mem_path and layout.file_note(mem_path) != path:
            return None  # a daily note kept in a date sub-folder: only a full scan finds every note of a day
        if mem_path and (mem_path in files or mem_path in CREATABLE or _new_daily(mem_path)):
            scoped.add(mem_path)
            continue
        rel = layout.entity_rel_of_dir(parent)
        if rel is not None and name == f"{slug_of(rel)}.md" and (rel in entities or fresh.entity(rel)):
            rels.add(rel)
            continue
        owner = layout.entity_rel_of_dir(parent.removesuffix("/facts")) if parent.endswith("/facts") else None
        if owner is not None and name.endswith(".md") and (owner in entities or fresh.entity(owner)):
            rels.add(owner)
            continue
        return None
    if len(rels) + len(scoped) > SCOPE_MAX:
        return None
    return Scope(frozenset(rels), frozenset(scoped), frozenset(fresh.seen))


class _Fresh:
    """Decides whether a folder the last settled pass did not know can be read as a new entity by a scoped pass.

    Only the plain case qualifies: a new folder beside known entities (``people/nora-lind`` next to other
    people), nested in none and holding none, with a name a full scan would take as it is. Anything else (a new
    kind folder, a name differing from another only in case, a reserved place) is left to a full pass, which
    makes the checks a scoped scan skips. What this cannot see from names alone, the files beside the new
    folder on disk, ``engine/scoped.py``'s ``crowded`` checks.
    """

    def __init__(self, entities: Mapping[str, Any], layout: VaultLayout) -> None:
        self.known = entities
        self.layout = layout
        self.seen: set[str] = set()

    @functools.cached_property
    def kinds(self) -> set[str]:
        return {rel.rpartition("/")[0] for rel in self.known}

    @functools.cached_property
    def folded(self) -> set[str]:
        return {fold(rel) for rel in self.known}

    def entity(self, rel: str) -> bool:
        if rel in self.seen:
            return True
        parent = rel.rpartition("/")[0]
        reserved = self.layout.reserved_life_dirs()
        if (
            parent not in self.kinds
            or fold(rel) in self.folded
            or any(name_problem(part) for part in rel.split("/"))
            or any(rel == r or rel.startswith(f"{r}/") for r in reserved)
            or any(k.startswith(f"{rel}/") or rel.startswith(f"{k}/") for k in self.known)
        ):
            return False
        self.seen.add(rel)
        return True


def _new_daily(mem_path: str) -> bool:
    name = mem_path.removeprefix("workspace/memory/")
    return name != mem_path and "/" not in name and daily_date(name) is not None


class Context:
    """The rest of the vault as a scoped pass sees it: names of the entities and notes it does not read."""

    def __init__(
        self,
        scope: Scope,
        layout: VaultLayout,
        store: BaseIndex,
        keys: list[str],
        entities: Mapping[str, Any],
        files: Iterable[str],
        naming: set[str] | None = None,
    ) -> None:
        """``keys``: the base's units in scope; ``files``: the memory paths of the base's file units; ``naming``:
        see below."""
        self.scope = scope
        self.base_facts = store.facts  # every fact unit's key and base JSON, read only when a name changes
        # Entities whose facts name the created or renamed ones: found by a first attempt, or searched for.
        self.naming = naming
        self.reach: set[str] = set()  # those out of scope: a second attempt reads them too
        self.names: dict[str, Names] = {}  # every entity's, as the last settled pass named it
        for rel, value in entities.items():
            name, aliases = value
            self.names[rel] = (str(name), tuple(str(a) for a in aliases))
        self.keys = keys  # base units in scope
        self.inside: set[str] = set()  # note paths of units in scope, before the pass
        counted: Counter[str] = Counter()  # names of unread entity and file notes
        for rel in self.names:
            if rel in scope.rels:
                self.inside.add(layout.entity_note(rel))
            else:
                counted[fold(slug_of(rel))] += 1
        for mem_path in files:
            path = layout.file_note(mem_path)
            if path and mem_path in scope.files:
                self.inside.add(path)
            elif path:
                counted[note_stem(path)] += 1
        read_facts: Counter[str] = Counter()  # names of fact notes in scope, which the base counts too
        for key in self.keys:
            if is_fact(key):
                rel, note = split_fact_key(key)
                self.inside.add(layout.fact_note(rel, note))
                read_facts[fold(note)] += 1
        self.outside = Unread(counted, read_facts, store.stem_count)  # how many unread notes have each name

    def widen(self, names: Mapping[str, Names], inside: Iterable[str]) -> str:
        """Why the scoped pass must become a full one ("" when it need not).

        ``names`` and ``inside`` are the scoped entities' names and note paths as the pass would leave them.
        Another entity's links, mentions and related list depend on them only through names and note names.
        """
        changed = {rel for rel in self.scope.rels | set(names) if names.get(rel) != self.names.get(rel)}
        if changed:
            if self.naming is None:
                self.naming = self._naming(changed, names)
            self.reach = self.naming - self.scope.rels
            if self.reach:
                return f"{len(self.reach)} entities out of scope name an entity created, renamed or deleted"
        after = set(inside)
        moved = after ^ self.inside
        if not moved:
            return ""
        before = Counter(map(note_stem, self.inside))
        now = Counter(map(note_stem, after))
        for stem in set(map(note_stem, moved)):
            # A link is short while one note has its name. Out of scope, only notes linking to entity notes
            # (read when they name a changed entity) and to notes whose name becomes unique or shared depend
            # on the change: a folder moved keeps each name's count, and every link as short as it was.
            if (self.outside[stem] + before[stem] > 1) != (self.outside[stem] + now[stem] > 1):
                return f"a note named {stem!r} changes which links are short"
            if (self.outside[stem] + before[stem] > 0) != (self.outside[stem] + now[stem] > 0) and self._cite(stem):
                return f"the daily note {stem} comes or goes, and facts out of scope link to it or will"
        return ""

    def _cite(self, day: str) -> bool:
        """Whether a fact out of scope names ``day`` as its source: its note links to that daily note only
        while the note exists (``vault/notes.daily_link``). Asked only when a day's note comes or goes."""
        if daily_date(f"{day}.md") is None:
            return False
        needle = day.encode()
        return any(
            needle in data and rel_of(key) not in self.scope.rels and source_day(json.loads(data).get("source")) == day
            for key, data in self.base_facts()
        )

    def _naming(self, changed: Iterable[str], names: Mapping[str, Names]) -> set[str]:
        """The entities with a fact whose text holds a name ``changed`` entities (created, renamed or deleted) had
        or have.

        A fact's mentions and the links they render depend on other entities only through the names its text
        holds: a fact holding none of these strings renders as before. Facts out of scope are as the last
        settled pass left them on both sides, so the base holds their text. The JSON is searched as bytes for
        each name as JSON writes it (escaping works character by character, so a name inside a text is inside
        its JSON, written with or without escaping what is not ASCII), then the matches are decoded to look in the
        text itself.
        """
        pairs = [pair for rel in changed for pair in (names.get(rel), self.names.get(rel)) if pair]
        wanted = {n for name, aliases in pairs for n in mention_strings(name, aliases)}
        needles = {json.dumps(n, ensure_ascii=ascii)[1:-1].encode() for n in wanted for ascii in (False, True)}
        found: set[str] = set()
        for key, data in self.base_facts():
            rel = rel_of(key)
            if rel in found or not any(needle in data for needle in needles):
                continue
            text = json.loads(data).get("fact")
            if isinstance(text, str) and any(n in text for n in wanted):
                found.add(rel)
        return found

    def named(self, own: Mapping[str, Names]) -> dict[str, Names]:
        """Every entity's names as the pass leaves them: the scoped ones' as planned (``own``; one deleted has
        none), the others' as the last settled pass left them."""
        return {rel: n for rel, n in self.names.items() if rel not in self.scope.rels} | dict(own)

    def links(self, note_paths: Iterable[str]) -> LinkIndex:
        """Links as the whole vault decides them: the scoped notes plus every unread one."""
        return LinkIndex(note_paths, self.outside)


class Unread:
    """How many notes a scoped pass does not read have a given name (``note_stem``): entity and file notes
    counted from the names and keys it has, fact notes asked of the base's index of their names, for just the
    names the pass looks up (a few dozen, of 53,000 notes at 50k facts)."""

    def __init__(self, counted: Counter[str], read_facts: Counter[str], facts_named: Callable[[str], int]) -> None:
        self._counted = counted
        self._read_facts = read_facts
        self._facts_named = facts_named
        self._known: dict[str, int] = {}

    def __getitem__(self, stem: str) -> int:
        if stem not in self._known:
            self._known[stem] = self._counted[stem] + self._facts_named(stem) - self._read_facts[stem]
        return self._known[stem]


class Planned:
    """Every entity's name and every note's name, known before a batch is planned (a first import's batches)."""

    def __init__(self, names: dict[str, Names], counts: Counter[str]) -> None:
        self.names = names
        self.counts = counts  # how many notes have each name, the batch's own included

    def widen(self, names: Mapping[str, Names], inside: Iterable[str]) -> str:
        return ""  # nothing was read before to disagree with

    def named(self, own: Mapping[str, Names]) -> dict[str, Names]:
        return self.names | dict(own)

    def links(self, note_paths: Iterable[str]) -> LinkIndex:
        return LinkIndex((), self.counts)
