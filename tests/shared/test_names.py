"""File-name checks on every character there is: the quick path must refuse exactly what a per-character look
at Unicode categories refuses."""

from __future__ import annotations

import sys
import unicodedata

from vaultsync.names import name_problem

FORBIDDEN = set('\\/:*?"<>|#^[]')
UNSEEN = {"Cc", "Cf", "Zl", "Zp"}


def test_every_character_is_refused_exactly_when_forbidden_or_unseen() -> None:
    wrong = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) == "Cs":
            continue  # a lone surrogate is no text a file name can hold
        problem = name_problem(f"a{char}b") or ""
        if char in FORBIDDEN:
            expected = f"contains {char}, which"
        elif unicodedata.category(char) in UNSEEN:
            expected = "contains control characters"
        else:
            expected = ""
        if (expected in problem) if expected else not problem:
            continue
        wrong.append(f"U+{code:04X}: {problem!r}")
    assert not wrong, wrong[:10]


def test_every_forbidden_character_is_named_once_in_order() -> None:
    assert name_problem("a]b#c]") == "name 'a]b#c]' contains # ], which Obsidian or Windows reject in file names"
