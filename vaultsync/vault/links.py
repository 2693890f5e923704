"""Wiki-links between notes, and finding which entities a fact's text names.

Links use the shortest form that Obsidian resolves to one note: ``[[slug|Display]]`` when the slug is unique in
the vault, else the vault path. Mentions are found in one pass over the text with a dictionary keyed by each
name's first token, so the cost follows the length of the text, not the number of entities.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from vaultsync.names import fold

_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))
_CJK = "".join(f"{chr(first)}-{chr(last)}" for first, last in _CJK_RANGES)
# A token is a run of word characters outside CJK scripts, or one CJK character: CJK text has no spaces, so
# names written in it are matched anywhere, while Latin names need word boundaries ("Mia" is not in "Miami").
# A class of these ranges takes about 5 ms to compile: one pattern, compiled once per process.
_TOKEN = re.compile(rf"[^\W{_CJK}]+|[{_CJK}]")
_PAREN_NAME = re.compile(r"^(.+?)\s*[(\uff08](.+?)[)\uff09]\s*$")  # ASCII or full-width brackets
_LINK = re.compile(r"^\[\[([^\]|]+)(?:\|([^\]]*))?\]\]$")


@functools.lru_cache(maxsize=4096)  # asked twice for each name found in a fact; texts share their characters
def word_char(ch: str) -> bool:
    """Whether ``ch`` belongs to a word outside CJK scripts, a name's boundary when it is not."""
    return _TOKEN.match(ch) is not None and not any(first <= ord(ch) <= last for first, last in _CJK_RANGES)


def _first_token(name: str) -> str | None:
    m = _TOKEN.match(name)
    return m.group(0) if m else None


def name_variants(display: str) -> list[str]:
    """The names a display name stands for: "李伟 (Li Wei)" is also written "李伟" and "Li Wei".

    A display name that is only a slug ("acme-corp") also stands for its words as a name ("Acme Corp").
    """
    names = [display]
    if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+|[a-z]+", display):
        names.append(" ".join(w.capitalize() for w in display.split("-")))
    m = _PAREN_NAME.match(display)
    if m:
        names += [m.group(1).strip(), m.group(2).strip()]
    return [n for n in names if n]


def mention_strings(name: str, aliases: Iterable[str]) -> list[str]:
    """Every string a text can name an entity by: the variants of its display name, and its aliases."""
    return [*name_variants(name), *aliases]


class MentionMatcher:
    """Finds the entities named in a text."""

    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        # first token -> [(length, name -> key)], longest first: many names can share a first word ("Anna"),
        # and one lookup per length keeps a text's cost apart from how many of them there are.
        by_token: dict[str, dict[int, dict[str, str]]] = {}
        for name, key in names:
            token = _first_token(name)
            if token is None or len(name) < 2:
                continue
            by_token.setdefault(token, {}).setdefault(len(name), {}).setdefault(name, key)
        self._by_token = {t: sorted(lengths.items(), reverse=True) for t, lengths in by_token.items()}

    def find(self, text: str) -> set[str]:
        found: set[str] = set()
        if self._by_token.keys().isdisjoint(_TOKEN.findall(text)):
            return found  # most facts name no entity: one scan of the text tells
        for m in _TOKEN.finditer(text):
            candidates = self._by_token.get(m.group(0))
            if not candidates:
                continue
            start = m.start()
            for length, keys in candidates:
                end = start + length
                key = keys.get(text[start:end])
                if key is None:
                    continue
                if end < len(text) and word_char(text[end - 1]) and word_char(text[end]):
                    continue
                found.add(key)
                break
        return found


def _alias(text: str) -> str:
    # "|" and "]" would end the link early; Obsidian shows the alias, so dropping them is harmless.
    return re.sub(r"[\[\]|]", "", text).strip()


def note_stem(path: str) -> str:
    """The name a wiki-link uses for a note, in the form two names collide in."""
    return fold(path.rsplit("/", 1)[-1].removesuffix(".md"))


class Counts(Protocol):
    """How many notes have each name (a ``Counter``, or one that counts on demand)."""

    def __getitem__(self, name: str, /) -> int: ...


class LinkIndex:
    """Knows every note name vaultsync renders, to decide when a bare name is ambiguous."""

    def __init__(self, note_paths: Iterable[str], more: Counts | None = None) -> None:
        """``more``: stems of further notes, already counted (a scoped pass's unread notes, every note of a
        batched pass). It is looked into, not copied (it holds a name per note of the vault, and a batched pass
        plans a hundred batches against it), so it must not change while this index is in use."""
        self._counts = Counter(map(note_stem, note_paths))
        self._more: Counts = more if more is not None else Counter()

    def has(self, name: str) -> bool:
        """Whether some note is called ``name`` (a wiki-link's target, e.g. a daily note's date)."""
        folded = fold(name)
        return self._counts[folded] + self._more[folded] > 0

    def link(self, note_path: str, display: str | None = None) -> str:
        stem = note_path.removesuffix(".md")
        name = stem.rsplit("/", 1)[-1]
        folded = fold(name)
        target = name if self._counts[folded] + self._more[folded] <= 1 else stem
        alias = _alias(display) if display else ""
        if alias and alias != target:
            return f"[[{target}|{alias}]]"
        if target != name:
            return f"[[{target}|{name}]]"
        return f"[[{target}]]"


def link_target(value: str) -> str | None:
    """The note name a wiki-link points at (``[[a/b/c|x]]`` -> ``c``), or None when it is not one link."""
    m = _LINK.match(value.strip())
    if not m:
        return None
    return m.group(1).strip().rsplit("/", 1)[-1].removesuffix(".md")
