"""Who is who: stable note names for facts, ids for new facts, and the entity a person or a program names.

A fact's note name is its id when it has a usable one. A fact without an id gets ``<slug>-<hash>`` from its text
the first time it is seen; afterwards the base remembers which note it is, so an edit to its text (on either side)
keeps its note. Names are unique per entity even on case-insensitive file systems.

An entity is named the same way on every surface (the command line, the HTTP API, the MCP tools):
``resolve_entity`` takes its folder under ``life/`` (``areas/people/sarah``), the end of it (``people/sarah``,
``sarah``), its vault folder (``2 Areas/people/sarah``) or its note's path, and says which entity that is, which
several it could be, or which names come close.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from vaultsync.model import PARA_KEYS, Record, canonical
from vaultsync.names import fold


def _text_hash(record: Record) -> str:
    text = record.get("fact")
    seed = text if isinstance(text, str) else canonical(record)
    return hashlib.sha1(seed.encode()).hexdigest()[:6]


def assign_notes(
    slug: str,
    facts: Sequence[tuple[int, Record]],
    base: Mapping[str, tuple[Record, int]],
) -> dict[str, tuple[int, Record]]:
    """Give each (position, record) its note name, reusing the base's names wherever the fact is the same one.

    Matching order for a fact: the base note whose record has the same id; for facts without an id, the base
    note with the same content, then the same text, then the same position and date. Whatever is left is new.
    """
    names = _Names()
    by_id: dict[str, str] = {}
    idless_base: list[tuple[str, Record, int]] = []
    for note, (record, index) in base.items():
        fact_id = record.get("id")
        if isinstance(fact_id, str):
            by_id.setdefault(fact_id, note)
        else:
            idless_base.append((note, record, index))
    pending = _claim_by_id(facts, by_id, names)
    if idless_base:  # nothing to match against in a first import
        pending = _claim_idless(pending, idless_base, names)
    _name_new(slug, pending, names)
    return names.given


class _Names:
    """The note names given so far, kept folded too: two names that differ only in case are one note on a
    case-insensitive file system, so a name is taken when its folded form is."""

    def __init__(self) -> None:
        self.folded: set[str] = set()
        self.given: dict[str, tuple[int, Record]] = {}

    def taken(self, note: str) -> bool:
        return fold(note) in self.folded

    def claim(self, note: str, item: tuple[int, Record]) -> None:
        self.folded.add(fold(note))
        self.given[note] = item


def _claim_by_id(
    facts: Sequence[tuple[int, Record]], by_id: Mapping[str, str], names: _Names
) -> list[tuple[int, Record]]:
    """Give each fact whose id a base note holds that note; returns the facts still without one, in order."""
    pending: list[tuple[int, Record]] = []
    for index, record in facts:
        fact_id = record.get("id")
        note = by_id.get(fact_id) if isinstance(fact_id, str) else None
        if note and not names.taken(note):
            names.claim(note, (index, record))
        else:
            pending.append((index, record))
    return pending


def _claim_idless(
    pending: list[tuple[int, Record]], idless_base: Sequence[tuple[str, Record, int]], names: _Names
) -> list[tuple[int, Record]]:
    """Match facts without an id to the base's notes without one, by each test in turn, closest first, so a
    looser test never takes a note a closer one would give another fact; returns the facts still unmatched."""
    matchers = (
        lambda rec, idx, brec, bidx: canonical(rec) == canonical(brec),
        lambda rec, idx, brec, bidx: "fact" in rec and rec.get("fact") == brec.get("fact"),
        lambda rec, idx, brec, bidx: idx == bidx and _when(rec) == _when(brec),
    )
    for match in matchers:
        still: list[tuple[int, Record]] = []
        for index, record in pending:
            if isinstance(record.get("id"), str):
                still.append((index, record))
                continue
            found = next(
                (n for n, brec, bidx in idless_base if not names.taken(n) and match(record, index, brec, bidx)),
                None,
            )
            if found:
                names.claim(found, (index, record))
            else:
                still.append((index, record))
        pending = still
    return pending


def _name_new(slug: str, pending: Sequence[tuple[int, Record]], names: _Names) -> None:
    """Name each fact no base note matched: its id, else ``<slug>-<hash>``, with ``~2``, ``~3``... when taken."""
    for index, record in pending:
        fact_id = record.get("id")
        stem = fact_id if isinstance(fact_id, str) else f"{slug}-{_text_hash(record)}"
        note, n = stem, 1
        while names.taken(note):
            n += 1
            note = f"{stem}~{n}"
        names.claim(note, (index, record))


def _when(record: Record) -> object:
    return record.get("timestamp", record.get("date"))


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def next_fact_id(slug: str, ids: Sequence[str], taken: Iterable[str]) -> str:
    """The id an agent-side write gives one new fact (``next_fact_ids``)."""
    return next_fact_ids(slug, ids, taken, 1)[0]


def next_fact_ids(slug: str, ids: Sequence[str], taken: Iterable[str], count: int) -> list[str]:
    """The ids an agent-side write gives ``count`` new facts: the entity's own pattern, numbered past every id it
    ever had.

    The pattern is that of the newest numbered id in the file (``sarah-007`` -> ``sarah-``, three digits; ``f12``
    -> ``f``, two), leaving out the ``<slug>-mNNN`` ids a pass gives notes the person made unless nothing else
    is numbered; with no numbered id at all it is ``<slug>-001``. The numbers run on from one past the highest of
    that pattern among ``taken`` (every id the entity holds or ever held, and its notes' names), and no name that
    ``taken`` holds in any case is given. All ``count`` are minted from one look at ``taken``: an extraction
    handing in thousands of facts for one entity costs one pass over its ids, not one per fact.
    """
    taken = list(taken)
    numbered = [m for m in (_NUMBERED.match(i) for i in ids) if m]
    own = [m for m in numbered if not _is_person_minted(slug, m.group(0))] or numbered
    prefix, width = (own[-1].group(1), len(own[-1].group(2))) if own else (f"{slug}-", 3)
    highest = max(
        (int(m.group(2)) for m in (_NUMBERED.match(t) for t in taken) if m and m.group(1) == prefix), default=0
    )
    folded = {fold(t) for t in taken}
    minted: list[str] = []
    n = highest
    while len(minted) < count:
        n += 1
        name = f"{prefix}{n:0{width}d}"
        if fold(name) not in folded:
            minted.append(name)
    return minted


def _is_person_minted(slug: str, fact_id: str) -> bool:
    prefix = f"{slug}-m"
    return fact_id.startswith(prefix) and fact_id[len(prefix) :].isdigit()


class UnknownEntity(LookupError):
    """No entity has that name; ``suggestions`` are the closest names, for a "did you mean"."""

    def __init__(self, name: str, suggestions: Sequence[str]) -> None:
        hint = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no entity {name!r}{hint}")
        self.name = name
        self.suggestions = list(suggestions)


class AmbiguousEntity(LookupError):
    """The name fits several entities; ``candidates`` lists their folders, any of which names one alone."""

    def __init__(self, name: str, candidates: Sequence[str]) -> None:
        super().__init__(f"{name!r} names {len(candidates)} entities; name one: {', '.join(candidates)}")
        self.name = name
        self.candidates = list(candidates)


Same = Callable[[str, str], bool]


def entity_parts(name: str, vault_folders: Mapping[str, str]) -> list[str]:
    """``name``'s parts in memory terms: ``life/`` dropped, a vault PARA folder (``2 Areas``) turned into its
    memory name (``areas``), an entity note's path (``.../sarah/sarah.md``) into its folder.

    ``vault_folders``: vault folder name -> memory PARA name."""
    parts = [p for p in name.strip().replace("\\", "/").split("/") if p]
    if parts and parts[-1].endswith(".md"):
        parts[-1] = parts[-1][:-3]
        if len(parts) > 1 and parts[-1] == parts[-2]:
            parts.pop()
    if parts and parts[0] == "life":
        parts.pop(0)
    if parts and parts[0] in vault_folders:
        parts[0] = vault_folders[parts[0]]
    return parts


def resolve_entity(name: str, known: Collection[str], vault_folders: Mapping[str, str] | None = None) -> str:
    """The one entity of ``known`` (folders under ``life/``) that ``name`` names.

    A name starting with a PARA folder must be the whole folder; a shorter one fits every entity whose folder
    ends with it, compared as given and then case- and form-insensitively. Raises ``AmbiguousEntity`` when
    it fits several, ``UnknownEntity`` (with the closest names) when none.
    """
    parts = entity_parts(name, vault_folders or {})
    if not parts:
        raise UnknownEntity(name, [])
    whole = "/".join(parts)
    if whole in known:
        return whole
    rooted = parts[0] in PARA_KEYS
    exact: Same = lambda a, b: a == b  # noqa: E731
    loose: Same = lambda a, b: fold(a) == fold(b)  # noqa: E731
    for same in (exact, loose):
        found = sorted(rel for rel in known if _fits(rel.split("/"), parts, rooted, same))
        if len(found) == 1:
            return found[0]
        if found:
            raise AmbiguousEntity(name, found)
    raise UnknownEntity(name, _close(parts, known))


def _fits(rel: list[str], parts: list[str], rooted: bool, same: Same) -> bool:
    if len(rel) < len(parts) or (rooted and len(rel) != len(parts)):
        return False
    return all(same(a, b) for a, b in zip(rel[len(rel) - len(parts) :], parts, strict=True))


def _close(parts: list[str], known: Collection[str], most: int = 3) -> list[str]:
    """The entities whose slug is nearest the name's last part (a typo, a prefix, a missing word)."""
    by_slug: dict[str, list[str]] = {}
    for rel in known:
        by_slug.setdefault(fold(rel.rsplit("/", 1)[-1]), []).append(rel)
    wanted = fold(parts[-1])
    near = difflib.get_close_matches(wanted, list(by_slug), n=most, cutoff=0.6)
    near += sorted(s for s in by_slug if wanted and (s.startswith(wanted) or wanted in s.split("-")) and s not in near)
    return sorted({rel for slug in near[:most] for rel in by_slug[slug]})[:most]
