"""Which fact a fact note the pass has not seen before stands for, by the ``id`` property it carries.

A note's name is its fact's id, but people rename notes, restore them from Obsidian's ``.trash``, and iCloud
brings an evicted note back under another name (``sarah-007 2.md``). The ``id`` property is what survives all
three, so it decides: a note naming a fact whose own note is missing *is* that fact's note (renamed back to its
id by the pass); a note naming an id no fact holds keeps that id (a deleted fact restored, its ``supersededBy``
links intact); a note naming a fact whose note is still there is a copy, and nothing is guessed for it. Minting a
new id is left for notes with no usable id. Values in, values out: the pass acts on the answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from vaultsync.names import fold, name_problem


class Kind(StrEnum):
    ADOPT = "adopt"  # the note of a known fact whose own note is missing: ``note`` names it
    KEEP = "keep"  # a new fact that keeps the note's id, which no fact holds
    MINT = "mint"  # a new fact with a freshly minted id (the note has no usable one)
    COPY = "copy"  # the id is held by a fact whose note is present (``note``): left alone, reported
    AMBIGUOUS = "ambiguous"  # several notes, or several missing notes, for one id: left alone, reported


@dataclass(frozen=True)
class Claim:
    kind: Kind
    note: str = ""  # ADOPT: the known note it stands for; COPY: the present note holding its id
    fact_id: str = ""
    missing: tuple[str, ...] = ()  # AMBIGUOUS: the known notes of that id that are missing, left alone too


def claim(new: Mapping[str, Any], holders: Mapping[str, str], present: Collection[str]) -> dict[str, Claim]:
    """The claim of each new note.

    ``new``: each new note's name -> its ``id`` property (None when it has none, any value as read).
    ``holders``: each known fact note's name -> its fact's id (memory's record, else the synced one), for facts
    with a string id. ``present``: the names of the entity's fact notes in the vault now.
    """
    held: dict[str, list[str]] = {}
    for note, fact_id in holders.items():
        held.setdefault(fact_id, []).append(note)
    everyone = set(holders) | set(present)
    folds = Counter(fold(n) for n in everyone)
    wanted: dict[str, list[str]] = {}
    for note, fact_id in new.items():
        if isinstance(fact_id, str) and not name_problem(fact_id):
            wanted.setdefault(fact_id, []).append(note)
    out: dict[str, Claim] = {}
    for note, fact_id in new.items():
        claimants = wanted.get(fact_id, []) if isinstance(fact_id, str) else []
        if not claimants:
            out[note] = Claim(Kind.MINT)
            continue
        owners = sorted(held.get(fact_id, []))
        missing = [n for n in owners if n not in present]
        if owners and not missing:
            out[note] = Claim(Kind.COPY, owners[0], fact_id)
        elif len(claimants) > 1 or len(missing) > 1:
            out[note] = Claim(Kind.AMBIGUOUS, "", fact_id, tuple(missing))
        elif missing:
            out[note] = Claim(Kind.ADOPT, missing[0], fact_id)
        elif folds[fold(fact_id)] > (1 if fold(note) == fold(fact_id) else 0):
            out[note] = Claim(Kind.MINT)  # the name of another note (a fact without an id, a new one): not free
        else:
            out[note] = Claim(Kind.KEEP, "", fact_id)
    return out
