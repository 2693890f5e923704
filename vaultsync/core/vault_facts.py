"""The vault side of an entity's facts: each synced note read against its record, each new note placed by the
``id`` it carries (``core/claims.py``), and the ids a note may not change.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from vaultsync.core.claims import Claim, Kind, claim
from vaultsync.core.decide import UNKNOWN
from vaultsync.core.world import Minted, UnitState, World
from vaultsync.keys import ENTITY, FACT, entity_key, fact_key
from vaultsync.memory.identity import next_fact_id
from vaultsync.model import Problem, Record, Severity
from vaultsync.names import composed, derived_problem
from vaultsync.vault.layout import slug_of
from vaultsync.vault.notes import NoteError, entity_content, fact_record, same_value
from vaultsync.vault.scan import Note, VaultEntity


def vault_entity(
    world: World,
    rel: str,
    ventity: VaultEntity,
    base_derived: dict[str, Any] | None,
    synced_notes: set[str],
    ids_seen: dict[str, set[str]],
    today: date,
) -> None:
    """Set the vault value of the entity's note and of each of its fact notes' units."""
    _entity_note(world, rel, ventity, base_derived)
    style = world.styles.get(rel, {})
    known = set(world.mem_facts.get(rel, {})) | set(synced_notes)
    note_ids = _note_ids(world, rel, ventity)
    fresh = _known_notes(world, rel, ventity, style, ids_seen, today, known, note_ids)
    _place_fresh(world, rel, ventity, fresh, style, ids_seen, today, known, note_ids)


def _entity_note(world: World, rel: str, ventity: VaultEntity, base_derived: dict[str, Any] | None) -> None:
    """The entity's own note read against its record; a computed property the person edited is reported."""
    if ventity.note is None:
        return
    state = world.unit(entity_key(rel), ENTITY)
    state.vault_note = ventity.note
    if ventity.note.broken:
        state.vault = UNKNOWN
        return
    content, ignored = entity_content(ventity.note.props, ventity.note.body, state.base, base_derived)
    state.vault = content
    for prop in ignored:
        world.problems.append(
            Problem(
                ventity.note.path,
                f"'{prop}' is computed from the facts; the edit was replaced (edit the facts instead)",
                Severity.WARNING,
            )
        )


def _note_ids(world: World, rel: str, ventity: VaultEntity) -> dict[str, str]:
    """The id each note name stands for in links, the memory's facts first."""
    note_ids = {n: str(r["id"]) for n, (_, r) in world.mem_facts.get(rel, {}).items() if isinstance(r.get("id"), str)}
    # A note renamed in Obsidian has every link to it rewritten to its new name: that name stands for its id.
    for stem, note in ventity.facts.items():
        if isinstance(note.props.get("id"), str) and not note.broken:
            note_ids.setdefault(stem, note.props["id"])
    return note_ids


def _known_notes(
    world: World,
    rel: str,
    ventity: VaultEntity,
    style: dict[str, str],
    ids_seen: dict[str, set[str]],
    today: date,
    known: set[str],
    note_ids: dict[str, str],
) -> dict[str, Note]:
    """Read each note that is a known fact's (by name, or by a decomposed name) and finish a killed pass's
    renames; hand back the rest, the notes still to be placed by the id they carry."""
    # Notes already renamed to a minted id by a pass killed before it removed the original: by their text.
    renamed = {
        note.body.strip(): stem
        for stem, note in ventity.facts.items()
        if stem not in known and not note.broken and _is_minted(stem) and note.props.get("id") == stem
    }
    fresh: dict[str, Note] = {}
    # A note of a known fact whose name a sync app decomposed (NFD) is that fact's note, id property or not.
    unseen = {composed(n): n for n in known if n not in ventity.facts and not n.isascii()}
    for stem, note in ventity.facts.items():
        key = fact_key(rel, stem)
        own = unseen.get(composed(stem)) if stem not in known else None
        if own is not None and not note.broken:
            _adopt(world, rel, own, note, style, note_ids)
            continue
        if stem in known and _collides(world, rel, stem, note):
            _new_fact(world, rel, stem, note, style, ids_seen, today, known, note_ids, False)
            continue
        if stem in known:
            state = world.unit(key, FACT)
            state.vault_note = note
            # Read against the record as last synced; with none (a killed first import, a vault put back from a
            # copy), against the memory's: a note rendered from it reads back as it, ``supersededBy: null`` and all.
            synced = state.base if state.base is not None else state.memory if isinstance(state.memory, dict) else None
            state.vault = UNKNOWN if note.broken else _read_fact(world, note, synced, style, note_ids)
            _check_id(world, state, synced)
            continue
        if note.broken or rel in world.unreadable:
            # A new fact cannot be written to an items.json nobody can read: it waits, as a note, for the fix.
            continue
        twin = renamed.get(note.body.strip()) if "id" not in note.props else None
        if (
            twin is not None
            and twin != stem
            and all(same_value(v, ventity.facts[twin].props.get(k)) for k, v in note.props.items())
        ):
            world.minted[fact_key(rel, twin)] = Minted(rel, twin, note.path, note.raw)  # finish that rename
            continue
        fresh[stem] = note
    return fresh


def _place_fresh(
    world: World,
    rel: str,
    ventity: VaultEntity,
    fresh: dict[str, Note],
    style: dict[str, str],
    ids_seen: dict[str, set[str]],
    today: date,
    known: set[str],
    note_ids: dict[str, str],
) -> None:
    """Each note no known fact's name stands for, placed by the id it carries (``core/claims.py``): adopted by
    its fact, kept as a new fact, or left alone when the id is another note's."""
    holders = {n: i for n in known if isinstance(i := _held_id(world.units.get(fact_key(rel, n))), str)}
    claims = claim({stem: note.props.get("id") for stem, note in fresh.items()}, holders, set(ventity.facts))
    # Ids kept and notes adopted first, so that an id minted for another note cannot take theirs.
    for stem, note in sorted(fresh.items(), key=lambda item: claims[item[0]].kind is Kind.MINT):
        found = claims[stem]
        if found.kind is Kind.ADOPT and _collides(world, rel, found.note, note):
            _new_fact(world, rel, stem, note, style, ids_seen, today, known, note_ids, False)
        elif found.kind is Kind.ADOPT:
            _adopt(world, rel, found.note, note, style, note_ids)
        elif found.kind is Kind.COPY and _retyped(note, ventity.facts.get(found.note)):
            _new_fact(world, rel, stem, note, style, ids_seen, today, known, note_ids, False)
        elif found.kind in (Kind.COPY, Kind.AMBIGUOUS):
            _unclaimed(world, rel, stem, note, found)
        else:
            _new_fact(world, rel, stem, note, style, ids_seen, today, known, note_ids, found.kind is Kind.KEEP)


def _collides(world: World, rel: str, known: str, note: Note) -> bool:
    """The person made a note under the name or id of a fact the agent added since the last pass (both sides
    created the same id in one interval), with other text: two facts, so the note's gets an id of its own.

    Only in an entity already synced: after a killed first import, notes with no base are the memory's own."""
    state = world.units.get(fact_key(rel, known))
    synced = world.units.get(entity_key(rel))
    if state is None or state.base is not None or synced is None or synced.base is None or note.broken:
        return False
    text = note.body.strip()
    return isinstance(state.memory, dict) and bool(text) and text != str(state.memory.get("fact", "")).strip()


def _retyped(copy: Note, original: Note | None) -> bool:
    """A copy of a fact note (Obsidian's "Make a copy") whose text the person has since changed: a new fact.

    An unchanged copy is a duplicate (a sync app's, or one made a moment ago) and says nothing new: it waits."""
    if original is None or original.broken:
        return False
    return bool(copy.body.strip()) and copy.body.strip() != original.body.strip()


def _held_id(state: UnitState | None) -> object:
    """The id of a known fact: the memory's record's, else the one last synced."""
    if state is None:
        return None
    record = state.memory if isinstance(state.memory, dict) else state.base
    return record.get("id") if isinstance(record, dict) else None


def _check_id(world: World, state: UnitState, synced: Record | None) -> None:
    """A fact's id is who it is: an edit of a synced note's ``id`` property (removed, changed, or set to another
    fact's id) would detach the fact from its note, its history and the links to it. It is reported, and the
    fact waits on both sides until the id is put back."""
    if not isinstance(state.vault, dict) or synced is None or state.vault_note is None:
        return
    was, now = synced.get("id"), state.vault.get("id")
    if same_value(now, was):
        return
    said = "was removed" if now is None else f"was changed to {now!r}"
    fix = f"put back 'id: {was}'" if was is not None else "remove it"
    world.problems.append(
        Problem(
            state.vault_note.path,
            f"its 'id' property {said}; a fact's id is its identity and is not edited in the vault: {fix} "
            "(for a new fact, create a new note); left untouched on both sides",
            Severity.WARNING,
            standing=True,
        )
    )
    state.vault = UNKNOWN


def _adopt(world: World, rel: str, known: str, note: Note, style: dict[str, str], note_ids: dict[str, str]) -> None:
    """A renamed, restored or re-downloaded note of a fact whose own note is missing: it is that fact's note, read
    like any synced note, and renamed back to the fact's name."""
    key = fact_key(rel, known)
    state = world.unit(key, FACT)
    synced = state.base if state.base is not None else state.memory if isinstance(state.memory, dict) else None
    state.vault = _read_fact(world, note, synced, style, note_ids)
    state.vault_note = note
    world.minted[key] = Minted(rel, known, note.path, note.raw)


def _unclaimed(world: World, rel: str, stem: str, note: Note, found: Claim) -> None:
    """A note whose id another fact's note holds, or that several notes claim: nothing is guessed for it."""
    if found.kind is Kind.COPY:
        why = f"its 'id' {found.fact_id!r} is that of the fact note '{found.note}'"
        fix = "if it is a copy, delete it; for a new fact, remove its 'id' property"
    else:
        why = f"several notes claim the id {found.fact_id!r}"
        fix = "keep that id in one note; delete the others or remove their 'id' property"
        for missing in found.missing:  # their fact is not deleted while it is unclear which note stands for it
            world.unit(fact_key(rel, missing), FACT).vault = UNKNOWN
    world.unit(fact_key(rel, stem), FACT).vault = UNKNOWN
    world.problems.append(Problem(note.path, f"{why}; {fix}; left alone", Severity.WARNING, standing=True))


def _read_fact(
    world: World, note: Note, synced: Record | None, style: dict[str, str], note_ids: dict[str, str]
) -> Record | Any:
    """The record a synced fact's note stands for, or UNKNOWN (reported) when the note cannot say."""
    try:
        return fact_record(note.props, note.body, synced, style, note_ids, world.fact_text)
    except NoteError as exc:
        world.problems.append(Problem(note.path, f"{exc}; left untouched on both sides", standing=True))
        return UNKNOWN


def _new_fact(
    world: World,
    rel: str,
    stem: str,
    note: Note,
    style: dict[str, str],
    ids_seen: dict[str, set[str]],
    today: date,
    known: set[str],
    note_ids: dict[str, str],
    keep_id: bool,
) -> None:
    """A fact note the person made, or one restored under an id no fact holds (``keep_id``, see core/claims.py):
    it becomes a new fact, with its own id or one the agent will not also mint."""
    record = _read_fact(world, note, None, style, note_ids)
    if record is UNKNOWN:
        world.unit(fact_key(rel, stem), FACT).vault = UNKNOWN  # it waits, as a note, until the person says which
        return
    # A template copied rather than inserted still holds its variables ("{{date:YYYY-MM-DD}}"): such a value
    # says nothing, so it is dropped like an empty one and gets the default below.
    record = {k: v for k, v in record.items() if v is not None and not _template_variable(v)}
    record["fact"] = str(record.get("fact", "")).strip()
    if not record["fact"]:
        # Obsidian creates the note, then the person types: an empty fact now, renamed under the editor, would
        # lose what they type next. It becomes a fact once it has text.
        world.unit(fact_key(rel, stem), FACT).vault = UNKNOWN
        world.problems.append(Problem(note.path, NO_TEXT_YET, Severity.NOTE, standing=True))
        return
    fact_id = record.get("id")
    taken = known | ids_seen.get(rel, set()) | {str(r.get("id")) for _, r in world.mem_facts.get(rel, {}).values()}
    if not keep_id or not isinstance(fact_id, str):
        fact_id = _mint(world, rel, taken)
        problem = derived_problem(fact_id)
        if problem:  # an id no pass could hold: the note waits until the entity's folder has a shorter name
            world.unit(fact_key(rel, stem), FACT).vault = UNKNOWN
            world.problems.append(Problem(note.path, f"{problem}; the note is left as it is", standing=True))
            return
    text = record.pop("fact")
    record = {"id": fact_id, "fact": text, **{k: v for k, v in record.items() if k != "id"}}
    record.setdefault("status", "active")
    record.setdefault(style.get("timestamp", "timestamp"), today.isoformat())
    record.setdefault("source", "manual")
    key = fact_key(rel, fact_id)
    state = world.unit(key, FACT)
    state.vault = record
    state.vault_note = note
    known.add(fact_id)
    world.new_ids.append((rel, fact_id))
    if stem != fact_id:
        world.minted[key] = Minted(rel, fact_id, note.path, note.raw)


NO_TEXT_YET = "a new fact note with no text yet; it becomes a fact once its text is typed below the properties"
_TEMPLATE_VARIABLE = re.compile(r"\{\{[^{}]*\}\}\Z")


def _template_variable(value: Any) -> bool:
    return isinstance(value, str) and _TEMPLATE_VARIABLE.match(value.strip()) is not None


def _mint(world: World, rel: str, taken: set[str]) -> str:
    """The id of a fact the person made: the entity's own scheme, as an agent-side write gives one
    (``memory/identity.py``), so an entity's ids read as one sequence whoever added the fact."""
    held = sorted(world.mem_facts.get(rel, {}).values(), key=lambda item: item[0])
    ids = [r["id"] for _, r in held if isinstance(r.get("id"), str)]
    return next_fact_id(slug_of(rel), ids, taken)


def _is_minted(fact_id: str) -> bool:
    """Whether a name looks like an id a pass gives (it ends in a number), for finishing a killed rename."""
    return fact_id[-1:].isdigit()
