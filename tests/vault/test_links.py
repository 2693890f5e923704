"""Finding the entities a fact's text names, against a plain reading of the rule it implements."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.names import fold
from vaultsync.vault.links import MentionMatcher, word_char

WORD = re.compile(r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
TOKEN_START = re.compile(r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+|[\u4e00-\u9fff]")


def reference(names: list[tuple[str, str]], text: str) -> set[str]:
    """The rule spelled out: at each token's start, the longest name written there that does not run into a
    further word character names its entity (the first entity listed, when two share the name)."""
    usable = [(n, k) for n, k in names if len(n) >= 2 and TOKEN_START.match(n)]
    found = set()
    for m in TOKEN_START.finditer(text):
        start = m.start()
        here = [(n, k) for n, k in usable if TOKEN_START.match(n).group(0) == m.group(0) and text.startswith(n, start)]
        here.sort(key=lambda item: -len(item[0]))
        for name, key in here:
            end = start + len(name)
            if WORD.match(name[-1]) and end < len(text) and WORD.match(text[end]):
                continue
            found.add(key)
            break
    return found


PIECES = ["Ann", "Anna", "Ann Lee", "Anna Lee", "Lee", "Mia", "Miami", "李", "李伟", "伟", "Acme Corp", "Acme", "x"]
names = st.lists(
    st.tuples(st.sampled_from(PIECES), st.sampled_from(["ann", "anna", "lee", "mia", "li", "acme", "other"])),
    max_size=12,
)
texts = st.lists(st.sampled_from([*PIECES, " ", "-", ".", "s", "1", "和"]), max_size=20).map("".join)


@settings(max_examples=400, deadline=None)
@given(names, texts)
def test_mentions_follow_the_rule(listed: list[tuple[str, str]], text: str) -> None:
    assert MentionMatcher(listed).find(text) == reference(listed, text)


def test_many_names_sharing_a_first_word_are_told_apart() -> None:
    listed = [(f"Person {n}", f"p{n}") for n in range(2000)] + [("Person", "someone"), ("Mia", "mia")]
    matcher = MentionMatcher(listed)
    assert matcher.find("Person 12 met Person 1234x in Miami, then Mia.") == {"p12", "someone", "mia"}
    assert matcher.find("Nobody named here.") == set()


def test_word_char_is_a_word_character_outside_cjk_as_the_pattern_says() -> None:
    """``word_char`` stands for the class ``[^\\W<CJK>]``, which is slow to compile: every character of the BMP
    and a sample of the planes above must agree with it."""
    for code in [*range(0x10000), *range(0x10000, 0x110000, 97)]:
        ch = chr(code)
        assert word_char(ch) == (WORD.match(ch) is not None), f"U+{code:04X}"


def test_fold_takes_the_quick_path_for_ascii_only_where_it_gives_the_same() -> None:
    for code in range(0x80):
        for name in (chr(code), f"Note-{chr(code)}-X", f"{chr(code)}é"):
            assert fold(name) == unicodedata.normalize("NFC", name).casefold(), repr(name)
    assert fold("Cafe\u0301") == fold("café") == "café"
