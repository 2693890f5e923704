"""The values a write puts into ``items.json``, checked before the lock is taken: a new fact's record in its
file's own shape with an id never used before, the text and other fields a client sent, and the key a file
uses for a successor.

A client's value that cannot be written is an ``Invalid`` naming its field, so every face says which one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import suppress
from datetime import date
from typing import Any

from vaultsync.app.facts import records
from vaultsync.config import Config
from vaultsync.errors import Invalid
from vaultsync.memory.items import ItemsDoc
from vaultsync.memory.new_facts import DATE_FIELDS, BadField, check_date, new_facts
from vaultsync.model import Record
from vaultsync.names import derived_problem
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.vault.layout import VaultLayout, slug_of


def new_records(
    cfg: Config, rel: str, doc: ItemsDoc | None, wanted: Sequence[tuple[str, Mapping[str, Any], date | None]]
) -> list[Record]:
    """New facts for ``rel`` (text, other fields, the day said; None: today) in its file's own shape, their ids
    minted together past every id the entity holds or held (``memory/new_facts.py``)."""
    held = [r for _, r in records(doc)]
    days = [(text, extra, day or date.today()) for text, extra, day in wanted]
    try:
        made = new_facts(slug_of(rel), held, days, _ever(cfg, rel))
    except BadField as exc:
        raise Invalid(exc.field, exc.message) from None
    # The ids follow the entity's own pattern, which an old entity with a long name may push past the name rule.
    problem = next((p for p in (derived_problem(str(r["id"])) for r in made) if p), None)
    if problem:
        raise Invalid("entity", problem)
    return made


def _ever(cfg: Config, rel: str) -> set[str]:
    """Every id the entity has held as far as the base knows, and the names of its notes in the vault."""
    found: set[str] = set()
    base = StateFiles(cfg.state_dir).base
    if base.exists():
        store = BaseStore(base, read_only=True)
        try:
            found |= store.ids([rel]).get(rel, set())
        finally:
            store.close()
    facts = cfg.vault / VaultLayout(cfg.layout).facts_dir(rel)
    with suppress(OSError):
        found |= {name[:-3] for name in os.listdir(facts) if name.endswith(".md")}
    return found


def superseded_key(doc: ItemsDoc | None) -> str:
    """The key this file already uses for the successor's id; ``supersededBy`` in a file that uses neither."""
    held = [r for _, r in records(doc)]
    return (
        "superseded_by"
        if any("superseded_by" in r for r in held) and not any("supersededBy" in r for r in held)
        else "supersededBy"
    )


def fact_text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(field, "expected the fact's text, not empty")
    return value.strip()


def checked_fields(values: object, field: str) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        raise Invalid(field, "expected an object of field names and values")
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key:
            raise Invalid(field, "field names must be non-empty text")
        if key == "id":
            raise Invalid("id", "a fact's id cannot be set or changed; it is given when the fact is made")
        if key == "fact":
            value = fact_text(value, "fact")
        elif key in DATE_FIELDS and value is not None:
            value = _checked_date(value, key)
        elif key == "status" and not (isinstance(value, str) and value) and value is not None:
            raise Invalid("status", "expected text such as active or superseded")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise Invalid(f"{field}.{key}", "not a JSON value") from None
        out[key] = value
    return out


def _checked_date(value: object, field: str) -> str:
    try:
        return check_date(value, field)
    except BadField as exc:
        raise Invalid(exc.field, exc.message) from None
