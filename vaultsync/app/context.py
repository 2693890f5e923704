"""What an agent should know before it answers a message: the context a plugin puts in front of the prompt.

A model does not reliably search its memory before answering, so a plugin asks for this once per turn and
prepends it. It is built from reads the other faces already make (``recall``, ``get_entity``), in the order that
matters most when the budget runs out: first the entities the message names (their summary and their current
facts), then the best recall hits that are not already shown. A superseded fact is never shown as current:
entity facts are the active ones only, and hits are asked for with superseded facts left out.

The budget is in characters of the rendered text, since that is what costs prompt space; whole lines are
dropped, never cut in the middle, and ``truncated`` says when something was left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vaultsync.app.entities import Entity, get_entity
from vaultsync.app.hit_notes import existing_notes
from vaultsync.app.recall import Hit, RecallOptions, RecallResult, recall
from vaultsync.config import Config
from vaultsync.errors import NotFound, UsageError
from vaultsync.names import fold
from vaultsync.state.recall_query import UNSPACED_RUN
from vaultsync.text.markdown import first_h1
from vaultsync.text.yamlcore import split_note

__all__ = ["BUDGET", "Context", "context"]

BUDGET = 2000  # characters, about 500 tokens: enough for two entities and a handful of hits
MAX_ENTITIES = 3  # entities named in one message whose facts are shown; more is a list, not a conversation
FACTS_PER_ENTITY = 12
HITS = 8
SUMMARY_CHARS = 300
CANDIDATES = 10  # summary hits looked at to find the entities a message names
CHECKED = 100  # entities a message's name words point at whose whole name is compared with the message
LOOKED_UP = 12  # entities the message names that are read, before the first MAX_ENTITIES are kept
BRACKETS = re.compile("[()\uff08\uff09]")  # a title's other name is in brackets, ASCII or full-width
# Words that carry a conversation rather than a topic: greetings, thanks, requests to the assistant, the words
# every sentence has. A message made only of these ("thanks, that is all for today", "write me a poem") asks
# nothing of memory, yet each of them is in some daily note; the related memories are looked up with the rest.
# fmt: off
SMALL_TALK = frozenset([
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "anything", "are", "as", "at",
    "be", "been", "before", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "for", "from",
    "get", "give", "go", "going", "good", "got", "had", "has", "have", "hello", "help", "hey", "hi", "i", "if",
    "in", "into", "is", "it", "its", "just", "know", "let", "like", "look", "make", "me", "morning", "my",
    "nice", "no", "not", "now", "of", "off", "ok", "okay", "on", "or", "our", "out", "please", "so", "some",
    "something", "tell", "thank", "thanks", "that", "the", "their", "them", "then", "there", "these", "they",
    "thing", "things", "this", "to", "today", "tonight", "too", "up", "us", "very", "want", "was", "we", "well",
    "were", "will", "with", "would", "write", "yes", "yet", "you", "your",
])
# fmt: on
# Kept in what is looked up when something else is asked: recall ranks "when" questions by their dates.
QUESTION = frozenset(["how", "what", "when", "where", "which", "who", "why"])

Search = Callable[[str, RecallOptions], RecallResult]


@dataclass
class Context:
    query: str
    budget: int
    entities: list[dict[str, Any]] = field(default_factory=list)
    hits: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "budget": self.budget,
            "entities": self.entities,
            "hits": self.hits,
            "text": self.text,
            "truncated": self.truncated,
        }


def context(
    cfg: Config, query: str, budget: int = BUDGET, search: Search | None = None, min_score: float = 0.0
) -> Context:
    """The context for ``query`` within ``budget`` characters; ``search`` is the face's recall (a long-running
    server keeps its index open), plain ``recall`` otherwise. A related memory scoring below ``min_score`` is
    left out, so that a message memory knows nothing about gets nothing rather than the least bad lines; the
    entities a message names are shown whatever the floor, since naming them is what makes them relevant."""
    if budget < 1:
        raise UsageError("the budget must be a positive number of characters", "budget")
    ask: Search = search or (lambda words, options: recall(cfg, words, options))
    result = Context(query, budget)
    words = _words(query)
    if not words:
        return result
    shown: set[tuple[str | None, str | None]] = set()
    lines = _Lines(budget)
    for entity in _named(cfg, ask, query, words):
        facts = [f for f in entity.facts if f.record.get("status", "active") == "active"][:FACTS_PER_ENTITY]
        summary = _summary(entity.summary)
        if not lines.add(f"## {entity.name} ({entity.ref.entity})"):
            break
        if summary:
            lines.add(summary)
        kept = []
        for fact in facts:
            if lines.add(f"- {fact.record.get('fact', '')} [{fact.id}]"):
                kept.append({"id": fact.id, "fact": fact.record.get("fact"), "status": "active"})
                shown.add((entity.ref.entity, fact.id))
        ref = entity.ref
        [note] = existing_notes(cfg, [ref.note])  # a path the plugin can open, or None before the first pass
        result.entities.append(
            {"entity": ref.entity, "name": entity.name, "note": note, "summary": summary, "facts": kept}
        )
    topic = _topic(query)
    found = ask(topic, RecallOptions(limit=HITS * 2, active_only=True)).hits if topic else []
    own = {ref["entity"] for ref in result.entities}  # their summaries are shown above already
    hits = [h for h in found if h.score >= min_score and _fresh(h, shown) and not _own_summary(h, own)][:HITS]
    if hits and lines.add("## Related memories"):
        for hit in hits:
            if lines.add(_hit_line(hit)):
                result.hits.append(hit.to_json())
    result.text = lines.text()
    result.truncated = lines.dropped
    return result


def _words(text: str) -> set[str]:
    return {fold(w) for w in re.findall(r"\w+", text) if len(w) > 1}


def _holds(query: str, words: set[str], name: set[str]) -> bool:
    """The message holds every word of ``name``; one in an unspaced script has no space around it in the message
    ("王芳喜欢喝什么茶" holds 王芳), so it counts when it is part of the text."""
    text = fold(query)
    return all(w in words or (UNSPACED_RUN.fullmatch(w) is not None and w in text) for w in name)


def _topic(text: str) -> str:
    """The message without its small talk (``SMALL_TALK``) and single letters, in its own order: what the
    related memories are searched for; nothing when only small talk and question words are left."""
    words = [w for w in re.findall(r"\w+", text) if len(w) > 1 and fold(w) not in SMALL_TALK]
    return " ".join(words) if any(fold(w) not in QUESTION for w in words) else ""


def _named(cfg: Config, ask: Search, query: str, words: set[str]) -> list[Entity]:
    """The entities whose name the message holds: every word of the folder's slug (``sarah-chen``), or of its
    summary's title, is in it; in the order the message names them. Candidates are looked up by name in the
    recall index's names table (``RecallResult.named``), so an entity with facts and no summary is found, and one
    that many other summaries mention is not crowded out of them; the best summary hits add the entities a
    title in brackets names. No walk of the memory is needed."""
    answer = ask(query, RecallOptions(limit=CANDIDATES, kinds=("summary",)))
    titles: dict[str, list[set[str]]] = {}
    for hit in answer.hits:
        if hit.entity:
            titles.setdefault(str(hit.entity), []).extend(_title(hit.text))
    text = fold(query)
    names = {
        rel: [_words(rel.rsplit("/", 1)[-1].replace("-", " ")), *titles.get(rel, [])]
        for rel in dict.fromkeys([*answer.named, *titles])
    }
    found: list[tuple[int, Entity]] = []
    for rel in list(names)[:CHECKED]:
        named = names[rel]
        if not any(name and _holds(query, words, name) for name in named):
            named += _title(f"# {_heading(cfg, rel)}")  # read only when the slug and the hits do not name it
        held = [name for name in named if name and _holds(query, words, name)]
        if not held:
            continue
        try:
            entity = get_entity(cfg, rel)
        except (NotFound, ValueError):
            continue
        found.append((min(_at(text, w) for name in held for w in name), entity))
        if len(found) == LOOKED_UP:
            break
    found.sort(key=lambda pair: pair[0])
    return [entity for _, entity in found[:MAX_ENTITIES]]


def _heading(cfg: Config, rel: str) -> str:
    """The title of the entity's summary (its first ``# `` heading), "" without one: the name a summary gives."""
    try:
        raw = (cfg.life / rel / "summary.md").read_bytes()
    except OSError:  # none, or unreadable: the slug is its only name here, as a pass would report the file
        return ""
    _, body = split_note(raw.decode("utf-8", "replace"))
    return first_h1(body) or ""


def _at(text: str, word: str) -> int:
    """Where ``word`` first is in the message, for the order of the entities it names; the end when it is not."""
    at = text.find(word)
    return at if at >= 0 else len(text)


def _title(text: str) -> list[set[str]]:
    """The words of a summary's ``# Title`` when its hit starts with it; a name in brackets is another name of
    the same entity (``# 李伟 (Li Wei)``), and either names it."""
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith("# "):
        return []
    title = first[2:]
    return [_words(title), *(_words(part) for part in BRACKETS.split(title) if part.strip())]


def _summary(body: str) -> str:
    """The summary without its title, on one line, cut at a word within ``SUMMARY_CHARS``."""
    text = " ".join(line.strip() for line in body.splitlines() if line.strip() and not line.startswith("# "))
    if len(text) <= SUMMARY_CHARS:
        return text
    return text[:SUMMARY_CHARS].rsplit(" ", 1)[0] + "…"


def _own_summary(hit: Hit, entities: set[str]) -> bool:
    return hit.kind == "summary" and hit.entity in entities


def _fresh(hit: Hit, shown: set[tuple[str | None, str | None]]) -> bool:
    return hit.status != "superseded" and (hit.kind != "fact" or (hit.entity, hit.id) not in shown)


def _hit_line(hit: Hit) -> str:
    text = " ".join(hit.text.split())
    where = f"{hit.entity}, {hit.id}" if hit.kind == "fact" else hit.path
    return f"- {text} ({hit.kind}: {where})"


class _Lines:
    """Rendered lines, each added only if the whole text still fits the budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lines: list[str] = []
        self.size = 0
        self.dropped = False

    def add(self, line: str) -> bool:
        cost = len(line) + (1 if self.lines else 0)
        if self.size + cost > self.budget:
            self.dropped = True
            return False
        self.lines.append(line)
        self.size += cost
        return True

    def text(self) -> str:
        return "\n".join(self.lines)
