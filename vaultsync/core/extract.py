"""Reading what the extraction program answers: a list of proposed facts, each checked before any is written.

The program is a model's wrapper, so its answer is untrusted input. It is taken whole or not at all: one item
that is not a proposal (not an object, no text, an entity folder that is not one, or would leave ``life/``, a
line outside the text it was given) refuses the answer, and the message names the item and what was wrong, so
the program's author can fix it; nothing is written and the next run hands in the same text again.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from vaultsync.model import PARA_KEYS
from vaultsync.names import name_problem
from vaultsync.vault.layout import FACTS_DIR

KEYS = ("entity", "fact", "category", "source_line", "note", "new_entity")


class AnswerError(ValueError):
    """The answer is not a list of proposals; the message says where and why."""


@dataclass(frozen=True)
class Proposal:
    entity: str  # folder under life/
    fact: str
    category: str | None
    note: str  # the daily note the fact comes from, workspace-relative
    line: int  # 1-based line in that note
    new_entity: bool = False

    @property
    def source(self) -> str:
        return f"{self.note}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "fact": self.fact,
            "category": self.category,
            "source": self.source,
            "new_entity": self.new_entity,
        }


def entity_problem(entity: str) -> str | None:
    """Why ``entity`` is not a folder under ``life/<para>/`` (an absolute path, ``..``, a PARA folder alone)."""
    parts = entity.split("/")
    if parts[0] not in PARA_KEYS:
        return f"must start with one of {', '.join(PARA_KEYS)}/"
    if len(parts) < 2:
        return "names a PARA folder, not an entity inside it"
    bad = next((p for part in parts if (p := name_problem(part))), None)
    if bad:
        return bad
    if parts[-1] == FACTS_DIR:
        return f"an entity may not be called {FACTS_DIR!r}"
    return None


def read_answer(
    stdout: str, lines: Mapping[str, tuple[int, int]], known: Collection[str], reserved: Collection[str] = ()
) -> list[Proposal]:
    """The proposals in ``stdout``. ``lines``: each note handed over -> its first and last line handed;
    ``known``: the entity folders that exist; ``reserved``: folders whose vault place holds other files."""
    try:
        value = json.loads(stdout)
    except ValueError as exc:
        raise AnswerError(f"not JSON ({exc})") from None
    if not isinstance(value, list):
        raise AnswerError(f"expected a JSON list of proposed facts, got {type(value).__name__}")
    return [_item(n, item, lines, known, reserved) for n, item in enumerate(value, 1)]


def _item(
    n: int, item: object, lines: Mapping[str, tuple[int, int]], known: Collection[str], reserved: Collection[str]
) -> Proposal:
    where = f"item {n}"
    if not isinstance(item, dict):
        raise AnswerError(f"{where}: expected an object with {', '.join(KEYS[:4])}")
    unknown = sorted(set(item) - set(KEYS))
    if unknown:
        raise AnswerError(f"{where}: unknown key(s) {', '.join(unknown)}; expected {', '.join(KEYS)}")
    entity, fact, category = item.get("entity"), item.get("fact"), item.get("category")
    if not isinstance(entity, str) or not entity:
        raise AnswerError(f"{where}: 'entity' must be an entity's folder under life/, e.g. areas/people/sarah")
    problem = entity_problem(entity)
    if problem:
        raise AnswerError(f"{where}: entity {entity!r} is not a folder under life/: {problem}")
    new_entity = item.get("new_entity", False)
    if not isinstance(new_entity, bool):
        raise AnswerError(f"{where}: 'new_entity' must be true or false")
    if entity not in known and not new_entity:
        raise AnswerError(f'{where}: no entity {entity!r}; set "new_entity": true to create it')
    if entity not in known and entity in reserved:
        raise AnswerError(f"{where}: {entity!r} cannot be an entity: its place in the vault holds other files")
    if not isinstance(fact, str) or not fact.strip():
        raise AnswerError(f"{where}: 'fact' must be the fact's text, not empty")
    if category is not None and (not isinstance(category, str) or not category.strip()):
        raise AnswerError(f"{where}: 'category' must be text such as role or preference")
    note = item.get("note")
    if note is None and len(lines) == 1:
        note = next(iter(lines))
    if not isinstance(note, str) or note not in lines:
        raise AnswerError(f"{where}: 'note' must name one of the daily notes handed over: {', '.join(lines)}")
    line = item.get("source_line")
    first, last = lines[note]
    if not isinstance(line, int) or isinstance(line, bool) or not first <= line <= last:
        raise AnswerError(f"{where}: 'source_line' must be a line number of {note} from {first} to {last}")
    return Proposal(entity, fact.strip(), category.strip() if category else None, note, line, new_entity)
