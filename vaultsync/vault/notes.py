"""Fact and entity notes: rendering a memory record as an Obsidian note, and reading a person's edits back.

Reading back is type-aware against the base: a property whose value still equals (as a value, not as text) what
was synced keeps the base's JSON value and type, so Obsidian re-serialising a block, dropping quotes or turning
``1.0`` into ``1`` is never mistaken for an edit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from vaultsync.model import EntityContent, Record
from vaultsync.names import daily_date
from vaultsync.text.decoding import strip_bom
from vaultsync.text.yamlcore import YamlError, join_note, parse_properties, split_note
from vaultsync.text.yamldump import dump_properties
from vaultsync.vault.layout import CONFLICT_MARK
from vaultsync.vault.links import link_target

DATE_KEYS = frozenset({"timestamp", "date", "updated", "created", "lastAccessed"})
# Record keys shown under the contract's property name, so Bases views work on every shape of items.json.
VAULT_NAMES = {"date": "timestamp", "superseded_by": "supersededBy"}
SUPERSEDED = "supersededBy"
FACT_DERIVED = ("entity", "mentions", "daily")
TEXT_PROPERTY = "text"  # the fact text again, as a property Bases can show (``[vault] fact_text_property``)
ENTITY_DERIVED = ("kind", "aliases", "tags", "facts_active", "facts_superseded", "related", "updated")
# A person's edit to these is kept: it moves into summary.md's own properties (and so reaches the agent).
ENTITY_KEEPABLE = ("aliases", "tags")
_BARE_VIEW = re.compile(
    r"\r?\n```base\r?\n(?:(?!```).)*file\.inFolder\(\"[^\"]*/facts\"\)(?:(?!```).)*```(?:\r?\n)?\Z", re.DOTALL
)
# How vaultsync names the copy of a note that lost a clash; a view of facts must leave such copies out.
VIEW_MARKER = "%% vaultsync: live view of this entity's facts; edit a fact in its own note %%"


class NoteError(ValueError):
    """A note vaultsync cannot read; the message names the problem, the caller the file."""


def same_value(a: Any, b: Any) -> bool:
    """Value equality as Obsidian round-trips it: 1 == 1.0, but True is not 1 and "1" is not 1. NaN (which
    items.json may hold as ``NaN``, shown as ``.nan``) is the same value as itself, or no pass would settle."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or (a != a and b != b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def vault_name(key: str, record: Collection[str]) -> str:
    """The property name a record key is shown under; an alias only when the record lacks the main name."""
    target = VAULT_NAMES.get(key)
    return target if target and target not in record else key


def derived_names(candidates: tuple[str, ...], own: Mapping[str, Any]) -> tuple[str, ...]:
    """Derived properties never shadow a key of the memory's own: those are simply not derived."""
    return _derived_names(candidates, tuple(own))


@functools.lru_cache(maxsize=256)  # by the keys alone: the facts of a memory come in a handful of shapes
def _derived_names(candidates: tuple[str, ...], keys: tuple[str, ...]) -> tuple[str, ...]:
    shown = {vault_name(k, keys) for k in keys}
    return tuple(k for k in candidates if k not in keys and k not in shown)


def _split(text: str) -> tuple[dict[str, Any], str]:
    """Properties and body of a fact or entity note.

    A BOM (which some editors and sync tools put first) is read past, so the block after it is still properties;
    it is not written back. A block that looks like properties but is not one (blank lines before the opening
    ``---``, no closing ``---``) raises NoteError: read as body text, its YAML would become the fact's text or the
    summary, and every property would look deleted.
    """
    fm_text, body = split_note(strip_bom(text)[0])
    if fm_text is None:
        unread = _unread_block(body)
        if unread:
            raise NoteError(unread)
        return {}, body
    try:
        return parse_properties(fm_text), body
    except YamlError as exc:
        raise NoteError(f"frontmatter is not valid YAML: {exc}") from None


def _unread_block(text: str) -> str:
    """Why a note that starts like a properties block is not read as one, or "" when it does not start so."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or lines[first].strip() != "---":
        return ""
    if first:
        return (
            f"{first} blank line(s) before the opening '---', so neither Obsidian nor vaultsync reads the block as "
            "properties; delete the blank line(s) at the top"
        )
    if not any(line.rstrip() == "---" for line in lines[1:]):
        return "the properties block has no closing '---' line; add one after the last property"
    return "the opening line is not exactly '---'; remove what is around the dashes"


# -- facts ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FactView:
    """What a fact note shows beyond the record itself."""

    entity_link: str
    mentions: tuple[str, ...]
    superseded_link: Callable[[str], str | None]  # fact id -> link, None when the id is not a known fact
    daily_folder: str = "Daily"
    text_property: bool = False  # ``[vault] fact_text_property``: the text shown as the property TEXT_PROPERTY too
    # Whether the daily note of a day (``2026-01-27``) exists; None: every day's is taken to exist.
    daily_exists: Callable[[str], bool] | None = None


_SOURCE_DAY = re.compile(r"(?:^|/)memory/(\d{4}-\d{2}-\d{2})\.md\b|^(\d{4}-\d{2}-\d{2})$")


def source_day(source: Any) -> str | None:
    """The day a fact's ``source`` names (``2026-01-27`` or ``memory/2026-01-27.md``); None when no real day."""
    m = _SOURCE_DAY.search(source.strip()) if isinstance(source, str) else None
    day = (m[1] or m[2]) if m else None
    return day if day is not None and daily_date(f"{day}.md") is not None else None


def daily_link(source: Any, view: FactView) -> str | None:
    """A link to the daily note a fact's ``source`` names (``2026-01-27`` or ``memory/2026-01-27.md``), so the
    daily note lists the facts it gave as backlinks; None when the source names no real day.

    A day whose note does not exist is shown as plain text: a link to it would be a dead one, and clicking it
    makes Obsidian create an empty note in the daily folder, which the next pass would carry into the agent's
    memory as a daily note of its own."""
    day = source_day(source)
    if day is None:
        return None
    if view.daily_exists is not None and not view.daily_exists(day):
        return day
    return f"[[{view.daily_folder}/{day}|{day}]]"


def fact_properties(record: Record, view: FactView) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for key, value in record.items():
        if key == "fact" and isinstance(value, str):
            continue
        name = vault_name(key, record)
        if name == SUPERSEDED:
            if value is None:
                continue
            if isinstance(value, str):
                value = view.superseded_link(value) or value
        props[name] = value
    derived = derived_names(FACT_DERIVED, record)
    if "entity" in derived:
        props["entity"] = view.entity_link
    if "mentions" in derived and view.mentions:
        props["mentions"] = list(view.mentions)
    if "daily" in derived:
        link = daily_link(record.get("source"), view)
        if link:
            props["daily"] = link
    text = record.get("fact")
    if view.text_property and isinstance(text, str) and TEXT_PROPERTY not in record:
        props[TEXT_PROPERTY] = text.rstrip("\r\n")
    return props


def render_fact(record: Record, view: FactView, props: Mapping[str, Any] | None = None) -> str:
    """The note text; ``props`` are ``fact_properties(record, view)`` when the caller already has them."""
    shown = fact_properties(record, view) if props is None else props
    return join_note(dump_properties(shown, date_keys=DATE_KEYS), fact_body(record))


def read_fact_note(text: str) -> tuple[dict[str, Any], str]:
    """Properties and body of a fact note, raising NoteError when the frontmatter is unreadable."""
    return _split(text)


def _from_vault(name: str, value: Any, note_ids: Mapping[str, str]) -> Any:
    if name == SUPERSEDED and isinstance(value, list):
        # Obsidian's property editor makes a list of a text property whose type is changed. A fact has one
        # successor: a list of one is that one; any other list cannot go into items.json as an id.
        if len(value) != 1 or not isinstance(value[0], str):
            raise NoteError(
                f"its '{SUPERSEDED}' property holds a list of {len(value)} values, and a fact is superseded by one "
                "fact; set it to one link (or remove it)"
            )
        value = value[0]
    if name == SUPERSEDED and isinstance(value, str):
        target = link_target(value)
        return note_ids.get(target, target) if target else value
    return value


def fact_record(
    props: Mapping[str, Any],
    body: str,
    base: Record | None,
    style: Mapping[str, str],
    note_ids: Mapping[str, str] | None = None,
    text_property: bool = False,
) -> Record:
    """The memory record a fact note stands for.

    ``base`` is the record as last synced (None for a note the person created); ``style`` maps contract
    property names to the key this entity's items.json uses (e.g. ``timestamp`` -> ``date``); ``note_ids``
    maps the entity's note names to fact ids, so a link to note ``f1~2`` reads back as the id ``f1``. Raises
    NoteError for a note with both a ``fact`` property and a different text in its body.

    With ``text_property`` the note holds the text twice, in its body and in the property ``text`` (unless the
    fact has a ``text`` key of its own, which is then an ordinary property): an edited body wins; a property
    edited while the body was not (or the body emptied) is taken. Either way the next render makes both agree.
    """
    base = base or {}
    derived = set(derived_names(FACT_DERIVED, base))
    if text_property and TEXT_PROPERTY not in base:
        derived.add(TEXT_PROPERTY)
    names = {vault_name(k, base): k for k in base}
    values: dict[str, Any] = {}
    for name, value in props.items():
        if name in derived:
            continue
        key = names.get(name) or style.get(name, name)
        if key in base and same_value(value, base[key]):
            values[key] = base[key]
            continue
        new = _from_vault(name, value, note_ids or {})
        values[key] = base[key] if key in base and same_value(new, base[key]) else new
    # The body is the fact text. Trailing line breaks an editor adds are not part of it, unless the synced
    # text had them; a record that never had a text gains one only when the person writes one.
    text = body.rstrip("\r\n")
    if TEXT_PROPERTY in derived and isinstance(props.get(TEXT_PROPERTY), str):
        before = base.get("fact")
        before = before.rstrip("\r\n") if isinstance(before, str) else None
        edited = str(props[TEXT_PROPERTY]).rstrip("\r\n")
        if (text == before or not text.strip()) and edited != before and edited.strip():
            text = edited  # the body as synced (or emptied): the property's edit is the person's
    shown = values.get("fact", text)
    if text.strip() and not (isinstance(shown, str) and shown.rstrip("\r\n") == text):
        # A text that is not a string (a list) is shown as the 'fact' property: the body is not the text then,
        # and dropping what the person typed there would lose it.
        raise NoteError(
            "the note has both a 'fact' property and text in its body, and only one can be the fact's text; "
            "move the body text into the 'fact' property, or delete the property to make the body the text"
        )
    old_text = base.get("fact")
    if isinstance(old_text, str) and old_text.rstrip("\r\n") == text:
        text = old_text
    if "fact" not in values and (isinstance(old_text, str) or text or not base):
        values["fact"] = text
    for key, value in base.items():
        # supersededBy: null is not shown in the note; its absence there is not a deletion.
        if key not in values and value is None and vault_name(key, base) == SUPERSEDED:
            values[key] = None
    ordered = {k: values[k] for k in base if k in values}
    ordered.update((k, v) for k, v in values.items() if k not in ordered)
    return ordered


# -- entities ------------------------------------------------------------------------------------------------
def facts_view(facts_dir: str, text: bool = False) -> str:
    """The live table of an entity's facts; conflict copies in ``facts/`` are the person's to merge, not facts.
    ``text``: a column of the fact texts, from the property ``[vault] fact_text_property`` adds."""
    column = f"      - {TEXT_PROPERTY}\n" if text else ""
    return (
        f"{VIEW_MARKER}\n"
        "```base\n"
        "filters:\n"
        "  and:\n"
        f'    - file.inFolder("{facts_dir}")\n'
        "    - not:\n"
        f'        - file.name.contains("{CONFLICT_MARK}")\n'
        "views:\n"
        "  - type: table\n"
        "    name: Facts\n"
        "    order:\n"
        "      - file.name\n"
        f"{column}"
        "      - status\n"
        "      - category\n"
        "      - timestamp\n"
        "    sort:\n"
        "      - property: timestamp\n"
        "        direction: DESC\n"
        "```\n"
    )


def entity_properties(content: EntityContent, derived: Mapping[str, Any]) -> dict[str, Any]:
    props = dict(content.props)
    props.update((k, v) for k, v in derived.items() if k not in props)
    return props


def render_entity(content: EntityContent, derived: Mapping[str, Any], facts_dir: str, text: bool = False) -> str:
    props = entity_properties(content, derived)
    body = f"{content.body}\n{facts_view(facts_dir, text)}"
    return join_note(dump_properties(props, date_keys=DATE_KEYS), body)


def fact_body(record: Record) -> str:
    text = record.get("fact")
    return text + "\n" if isinstance(text, str) else ""


_VIEW_END = re.compile(r"\r?\n```\r?\n")


def read_entity_note(text: str) -> tuple[dict[str, Any], str]:
    """Properties and summary body of an entity note; text a person put below the facts view moves above it."""
    props, body = _split(text)
    cut = body.rfind("\n" + VIEW_MARKER)
    if cut < 0:
        # The marker line was deleted but the view itself is still there: it is not summary text either.
        m = _BARE_VIEW.search(body)
        return props, body[: m.start()] if m else body
    # A note a sync app converted to CRLF has "\r\n" before the marker: the line break is not summary text.
    summary, rest = body[:cut].removesuffix("\r"), body[cut + 1 :]
    fence = _VIEW_END.search(rest, max(rest.find("```base"), 0))
    tail = rest[fence.end() :] if fence else ""
    if tail.strip():
        summary = f"{summary}\n{tail}" if summary else tail
    return props, summary


def entity_content(
    props: Mapping[str, Any],
    body: str,
    base: EntityContent | None,
    base_derived: Mapping[str, Any] | None,
) -> tuple[EntityContent, list[str]]:
    """The summary an entity note stands for, and the derived properties a person changed in vain.

    A changed ``aliases`` or ``tags`` is kept by moving it into the summary's own properties; a changed count,
    link list or date is recomputed from the facts, and reported so the person knows why it came back. With
    no record of what was rendered (``base_derived`` None, a vault adopted as found) derived properties are
    simply recomputed.
    """
    base_props = base.props if base else {}
    own: dict[str, Any] = {}
    ignored: list[str] = []
    derived = set(derived_names(ENTITY_DERIVED, base_props))
    for key, value in props.items():
        if key in derived:
            if base_derived is None or same_value(value, base_derived.get(key)):
                continue
            if key in ENTITY_KEEPABLE:
                own[key] = value
            else:
                ignored.append(key)
            continue
        own[key] = base_props[key] if key in base_props and same_value(value, base_props[key]) else value
    ordered = {k: own[k] for k in base_props if k in own}
    ordered.update((k, v) for k, v in own.items() if k not in ordered)
    return EntityContent(ordered, body), ignored
