"""What a person types into recall, turned into terms the FTS5 index can only read as plain words.

FTS5 has a query language of its own (quotes, ``*``, ``AND``/``OR``/``NOT``, ``NEAR``, column filters, ``^``),
and a query that uses it wrongly is an error, not an empty result. A person asking their memory a question does
not mean any of that, so nothing typed reaches FTS5 as syntax: the text is cut into runs of letters and digits
and each becomes a quoted string. Scripts written without spaces (Chinese, Japanese, Thai, ...) are indexed as
overlapping pairs of characters (``grams``), so that a substring of a few characters finds the text it is part
of. A question in such a script is never a substring of its answer ("李伟的工厂参观是哪天" against "工厂参观定在
1月14日"), so its run is first cut at the script's function and question words (``UNSPACED_STOP``) and each piece
left gives its pairs as terms of their own, ORed and weighted by bm25 like words (``unspaced_terms``).
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
# A query's words and unspaced runs in order. A run is taken whole, with its combining marks (Thai vowels and tone
# marks are no letters to ``WORD``), so that its pairs are the pairs ``grams`` made of the same text.
TOKEN = re.compile(f"[{UNSPACED}]+|[^\\W_{UNSPACED}]+")
# The function words, particles and question words of unspaced scripts a question is cut at: they are in most
# texts, and a pair of characters across one ("伟的", "么茶") is in no answer. Longest first where they overlap.
UNSPACED_STOP = frozenset(
    # Chinese: question words, then particles and the copula. (One string: 60 quoted words read worse.)
    "什么时候 为什么 怎么样 什么 怎么 哪里 哪儿 哪天 哪个 哪些 哪位 多少 时候 如何 是否 有没有 是不是 "  # noqa: SIM905
    "的 了 吗 呢 吧 啊 呀 嘛 是 哪 谁 么 什 "
    # Chinese: plural pronouns, demonstratives and connectives (one character alone, 我 or 他, is in words: 其他).
    "我们 你们 他们 她们 它们 那个 这个 那些 这些 因为 所以 但是 已经 "
    # Japanese: question words and particles written in kana.
    "ですか でした です ます いつ どこ だれ なに から まで の は が を に へ で と も か ね よ "
    # Thai: question words and polite particles.
    "เมื่อไหร่ เมื่อไร ที่ไหน อะไร ใคร ไหม หรือ ครับ ค่ะ คะ".split()
)
MAX_STOP = max(map(len, UNSPACED_STOP))
MAX_NAME = 8  # characters of the longest name found inside an unspaced run (``unspaced_names``)
# Characters of unspaced text whose substrings are looked up as names: a question's worth; a pasted page would
# cost a lookup of seven substrings per character.
MAX_NAME_TEXT = 400
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


def unspaced_pieces(run: str) -> list[str]:
    """``run`` cut at its function and question words (``UNSPACED_STOP``), longest match first; the run whole
    when nothing else is left ("是什么" alone is still asked)."""
    pieces: list[str] = []
    start = i = 0
    while i < len(run):
        stop = next((n for n in range(min(MAX_STOP, len(run) - i), 0, -1) if run[i : i + n] in UNSPACED_STOP), 0)
        if stop:
            pieces.append(run[start:i])
            i = start = i + stop
        else:
            i += 1
    pieces.append(run[start:])
    return [p for p in pieces if p] or [run]


def unspaced_terms(run: str) -> list[Term]:
    """The terms of one unspaced run: each piece's overlapping pairs, a one-character piece by prefix (it is the
    first character of a pair, or a run's last character, in the index)."""
    out: list[Term] = []
    for piece in unspaced_pieces(run):
        if len(piece) == 1:
            out.append(Term(piece, _quoted(piece) + " *", grams=True))
        else:
            out += [Term(piece[i : i + 2], _quoted(piece[i : i + 2]), grams=True) for i in range(len(piece) - 1)]
    return out


def unspaced_names(text: str) -> list[str]:
    """Every substring of two to ``MAX_NAME`` characters of ``text``'s unspaced runs (their first
    ``MAX_NAME_TEXT`` characters), lower case: the names a question may hold without a space around them
    ("王芳喜欢喝什么茶" holds 王芳), looked up in the names table."""
    found: dict[str, None] = {}
    left = MAX_NAME_TEXT
    for whole in UNSPACED_RUN.findall(text.lower()):
        run, left = whole[: max(0, left)], left - len(whole)
        for i in range(len(run)):
            for n in range(2, min(MAX_NAME, len(run) - i) + 1):
                found[run[i : i + n]] = None
    return list(found)


def _quoted(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def terms(query: str) -> list[Term]:
    """The query's terms, at most ``MAX_TERMS``, without repeats; stop words only when nothing else is left."""
    found: dict[str, Term] = {}
    for token in TOKEN.findall(query.lower()):
        if UNSPACED_RUN.match(token):
            for term in unspaced_terms(token):
                found.setdefault(term.word, term)
        else:
            found.setdefault(token, Term(token, _quoted(token), grams=False))
        if len(found) >= MAX_TERMS * 4:
            break
    content = [t for t in found.values() if t.grams or t.word not in STOPWORDS]
    return (content or list(found.values()))[:MAX_TERMS]


def name_words(text: str) -> list[str]:
    """The words a name is recognised by in a question: lower case, no stop words, none of one letter."""
    return [w for w in dict.fromkeys(WORD.findall(text.lower())) if len(w) > 1 and w not in STOPWORDS]
