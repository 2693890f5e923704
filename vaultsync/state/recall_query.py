"""What a person types into recall, turned into terms the FTS5 index can only read as plain words.

FTS5 has a query language of its own (quotes, ``*``, ``AND``/``OR``/``NOT``, ``NEAR``, column filters, ``^``),
and a query that uses it wrongly is an error, not an empty result. A person asking their memory a question does
not mean any of that, so nothing typed reaches FTS5 as syntax: the text is cut into runs of letters and digits
and each becomes a quoted string. Scripts written without spaces (Chinese, Japanese, Thai, ...) are also cut
into overlapping pairs of characters, the same way the index cuts them (``grams``), so that a substring of a
few characters finds the text it is part of.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Letters and digits as FTS5's unicode61 tokenizer sees them (it splits on "_", which \w keeps).
WORD = re.compile(r"[^\W_]+")
# Scripts written without spaces between words; Hangul is included because Korean names are short runs.
UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
UNSPACED_RUN = re.compile(f"[{UNSPACED}]+")
MAX_TERMS = 12  # more words than this add time and no precision; the first ones are kept
# Words that occur in most questions and in most memory text; dropped when the query has other words.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "know",
    ]
)


@dataclass(frozen=True)
class Term:
    """One query term: ``word`` as typed (lower case), and the FTS5 expression that matches it."""

    word: str
    expr: str
    grams: bool  # matched in the pairs-of-characters column rather than by word


def grams(text: str) -> str:
    """The pairs-of-characters column for ``text``: each unspaced run as its overlapping pairs, then its last
    character alone, so that a one-character query (a prefix of a pair or that last character) finds it too."""
    out: list[str] = []
    for run in UNSPACED_RUN.findall(text):
        out += [run[i : i + 2] for i in range(len(run) - 1)]
        out.append(run[-1])
    return " ".join(out)


def _quoted(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def terms(query: str) -> list[Term]:
    """The query's terms, at most ``MAX_TERMS``, without repeats; stop words only when nothing else is left."""
    found: dict[str, Term] = {}
    for word in WORD.findall(query.lower()):
        spaced = UNSPACED_RUN.sub(" ", word).split()
        for part in spaced:
            found.setdefault(part, Term(part, _quoted(part), grams=False))
        for run in UNSPACED_RUN.findall(word):
            if len(run) == 1:
                expr = _quoted(run) + " *"
            else:
                expr = _quoted(" ".join(run[i : i + 2] for i in range(len(run) - 1)))
            found.setdefault(run, Term(run, expr, grams=True))
        if len(found) >= MAX_TERMS * 4:
            break
    content = [t for t in found.values() if t.grams or t.word not in STOPWORDS]
    return (content or list(found.values()))[:MAX_TERMS]


def name_words(text: str) -> list[str]:
    """The words a name is recognised by in a question: lower case, no stop words, none of one letter."""
    return [w for w in dict.fromkeys(WORD.findall(text.lower())) if len(w) > 1 and w not in STOPWORDS]
