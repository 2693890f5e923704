"""Unit keys: the one name a unit has in the base, the plan, the decisions and the snapshot, whichever side
it was read from. Every key is built and taken apart here, so its shape can change in one place.

- ``entity:<rel>``: an entity (its summary.md and entity note); ``rel`` is its folder under ``life/``,
  e.g. ``areas/people/sarah``.
- ``fact:<rel>#<note>``: one fact of that entity; ``note`` is its fact note's name (the fact's id, or a name
  minted for a fact without one).
- ``file:<root>/<path>``: a mirrored file; ``root`` is ``workspace`` or ``life``, e.g.
  ``file:workspace/memory/2026-01-27.md``.

Keys sort as text: an entity's facts lie between ``fact_range(rel)``'s ends, since ``$`` follows ``#``.
"""

from __future__ import annotations

import re

FACT, ENTITY, FILE = "fact", "entity", "file"
_FACT, _ENTITY, _FILE = f"{FACT}:", f"{ENTITY}:", f"{FILE}:"


def entity_key(rel: str) -> str:
    return f"{_ENTITY}{rel}"


def fact_key(rel: str, note: str) -> str:
    return f"{_FACT}{rel}#{note}"


def file_key(mem_path: str) -> str:
    return f"{_FILE}{mem_path}"


def kind_of(key: str) -> str:
    """``fact``, ``entity`` or ``file``."""
    return key.partition(":")[0]


def is_fact(key: str) -> bool:
    return key.startswith(_FACT)


def is_entity(key: str) -> bool:
    return key.startswith(_ENTITY)


def is_file(key: str) -> bool:
    return key.startswith(_FILE)


def split_fact_key(key: str) -> tuple[str, str]:
    """(entity rel, note name) of a fact key."""
    rel, _, note = key[len(_FACT) :].partition("#")
    return rel, note


def note_of(key: str) -> str:
    """A fact key's note name."""
    return key.partition("#")[2]


def rel_of(key: str) -> str:
    """The entity folder an entity or fact key belongs to; "" for a file key."""
    if key.startswith(_ENTITY):
        return key[len(_ENTITY) :]
    if key.startswith(_FACT):
        return key[len(_FACT) :].partition("#")[0]
    return ""


def mem_path_of(key: str) -> str:
    """A file key's memory path (``workspace/MEMORY.md``, ``life/...``)."""
    return key[len(_FILE) :]


def fact_range(rel: str) -> tuple[str, str]:
    """Bounds (low inclusive, high exclusive) of every fact key of entity ``rel``."""
    return f"{_FACT}{rel}#", f"{_FACT}{rel}$"


def facts_of(rel: str) -> str:
    """The prefix every fact key of entity ``rel`` starts with."""
    return f"{_FACT}{rel}#"


ALL_FACTS = (_FACT, f"{FACT};")  # bounds of every fact key (";" follows ":")


def scope_of(key: str) -> str:
    """What a change is said to be about: ``people/sarah`` for an entity or its facts, ``daily 2026-01-27``,
    ``MEMORY.md``, ``archive 2026-01.md``; commit messages and the report group by it."""
    kind = kind_of(key)
    if kind in (FACT, ENTITY):
        rel = rel_of(key)
        rest = rel.partition("/")[2]
        return rest if "/" in rest else rel
    if kind != FILE:
        return key.partition(":")[2]  # a remote merge's clash, ``git:<path>``: the file it is about
    mem_path = mem_path_of(key)
    name = mem_path.rsplit("/", 1)[-1]
    if mem_path.startswith("workspace/memory/archive/"):
        return "archive " + mem_path.removeprefix("workspace/memory/archive/")
    if (
        mem_path.startswith("workspace/memory/")
        and mem_path.count("/") == 2
        and re.match(r"\d{4}-\d{2}-\d{2}\.md$", name)
    ):
        return "daily " + name[:-3]
    if mem_path.startswith("workspace/") and mem_path.count("/") == 1:
        return name
    return mem_path


ENTITY_FILES = ("items.json", "summary.md")  # the memory files of an entity folder


def owner_of(key: str) -> str:
    """The unit a change is made on, as one actor makes it: the entity for an entity or any of its facts (its
    ``items.json``, ``summary.md`` and notes change together), the file itself for a mirrored file."""
    return entity_key(rel_of(key)) if kind_of(key) in (FACT, ENTITY) else key


def owner_of_walk_key(walk_key: str) -> str:
    """``owner_of`` for a memory file named as a walk names it (``life/areas/people/sarah/items.json``,
    ``workspace/memory/2026-01-27.md``)."""
    folder, _, name = walk_key.rpartition("/")
    if walk_key.startswith("life/") and name in ENTITY_FILES and folder.count("/") >= 2:
        return entity_key(folder.removeprefix("life/"))
    return file_key(walk_key)
