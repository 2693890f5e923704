"""When a write asks for what a fact already says: the rule that makes remember and supersede safe to repeat.

A program that writes to the memory retries: after a timeout, a vague answer or a restart it sends the same
call again. The memory must then change once, not once per call, so a write first asks whether the entity
already holds what it would add. Two sentences are the same fact when they read the same once spacing, case,
Unicode's compatibility forms and one closing full stop are set aside (``sentence_key``): "Sarah Chen moved to
Berlin." and "sarah chen  moved to Berlin" are one fact; "Sarah Chen moved to Bonn" is another. Nothing else is
guessed at (no stemming, no synonyms), so two facts a person would tell apart are never merged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from vaultsync.model import Record

_SPACE = re.compile(r"\s+")
SUCCESSOR_KEYS = ("supersededBy", "superseded_by")


def sentence_key(text: str) -> str:
    """``text`` as the comparison sees it: NFKC, case folded, runs of white space made one space, the ends
    trimmed, and one final full stop dropped."""
    folded = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded[:-1].rstrip() if folded.endswith(".") else folded


def is_active(record: Record) -> bool:
    """A fact with no status counts as active, as everywhere else."""
    return record.get("status", "active") == "active"


def active_saying(held: Iterable[Record], text: str, besides: str | None = None) -> Record | None:
    """The first active fact of ``held`` (one with an id) whose sentence is ``text``'s; ``besides``: an id left
    out."""
    key = sentence_key(text)
    for record in held:
        said, fact_id = record.get("fact"), record.get("id")
        if not (is_active(record) and isinstance(said, str) and isinstance(fact_id, str)) or fact_id == besides:
            continue
        if sentence_key(said) == key:
            return record
    return None


def successor_of(record: Record) -> str | None:
    """The id a superseded fact names as its successor, under either spelling of the key; None when it has none
    or is not superseded."""
    if record.get("status") != "superseded":
        return None
    for key in SUCCESSOR_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None
