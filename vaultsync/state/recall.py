"""The recall index: an SQLite FTS5 table over every fact, summary, section and block of the memory.

It lives in the state folder (``StateFiles.recall``) and is only ever a cache of the two trees (its file, and
what replaces one that cannot be used: ``vaultsync.state.recall_file``). It remembers the stat (size, mtime,
inode) of every memory file it read, so that keeping it current after a pass re-reads only the files whose
stat moved.

This module stores and searches an open index; it does not read the memory (``vaultsync.write_path.recall_refresh``
does, and hands over plain ``Doc`` values), so the state layer stays free of the memory and vault packages.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from vaultsync.state.recall_query import UNSPACED_RUN, Term, name_words

STAGE = 2000  # docs held in memory at a time while a refresh adds them
RACY_NS = 2_000_000_000  # a file this fresh may change again within its mtime's tick: recorded as unknown
TOKENIZER = "porter unicode61 remove_diacritics 2"
# Column weights for bm25: the text itself, the entity's names and the heading above a block, the category,
# the pairs of characters of unspaced scripts.
WEIGHTS = (1.0, 0.2, 0.2, 1.0)
COLUMNS = ("body", "names", "extra", "grams")


class IndexBroken(Exception):
    """The index file cannot be used as it is: the caller drops it and builds it again."""


@dataclass(frozen=True)
class Doc:
    """One searchable piece of memory and where it came from (``source``: the memory file, ``root/path``)."""

    source: str
    kind: str  # fact, summary, memory or daily
    root: str  # workspace or life
    path: str  # the memory file, relative to its root
    body: str
    names: str = ""  # entity name and aliases, or the heading above a block
    extra: str = ""  # a fact's category
    grams: str = ""  # pairs of characters of unspaced scripts (recall_query.grams)
    first_line: int | None = None
    last_line: int | None = None
    fact_id: str | None = None
    entity: str | None = None
    status: str | None = None
    superseded_by: str | None = None
    ts: str | None = None  # YYYY-MM-DD when the piece has a date
    vault_path: str | None = None
    speaker: str | None = None  # a daily-note line's speaker label (``**Sam**: ...``), lower case


@dataclass(frozen=True)
class Filters:
    kinds: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()  # entities' memory paths (areas/people/sarah); their sub-entities count too
    active_only: bool = False  # only pieces whose status is active or unset: no proposed nor superseded fact
    since: str | None = None  # YYYY-MM-DD, inclusive
    until: str | None = None


@dataclass
class Candidate:
    """A row the index matched, with its bm25 relevance (higher is better)."""

    doc: Doc
    relevance: float
    id: int  # the row, which orders a file's pieces: its neighbours are the rows next to it


Stat = tuple[int, int, int]  # size, mtime_ns, inode
DOC_FIELDS = [
    "source",
    "kind",
    "root",
    "path",
    "body",
    "names",
    "extra",
    "grams",
    "first_line",
    "last_line",
    "fact_id",
    "entity",
    "status",
    "superseded_by",
    "ts",
    "vault_path",
    "speaker",
]


class RecallIndex:
    """An open index; build it with ``open_index``. Every method may raise ``IndexBroken``."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        # Each word's document count, kept until the index changes: looking one up costs a tokenizer run and a
        # vocabulary read (about 0.3 ms), a query's whole budget being 10.
        self._df: dict[str, int] = {}

    def close(self) -> None:
        self.db.close()

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise IndexBroken(str(exc)) from exc

    def file_stats(self) -> dict[str, Stat]:
        with self._guard():
            return {p: (s, m, i) for p, s, m, i in self.db.execute("SELECT path, size, mtime_ns, inode FROM files")}

    def unlisted(self) -> dict[str, Stat | None]:
        """The walked files the last listing of the tree found to be no memory a scan reads, with their stat then
        (None: too fresh to trust); see ``keep_unlisted``."""
        with self._guard():
            rows = self.db.execute("SELECT path, size, mtime_ns, inode FROM unlisted")
            return {p: None if s is None else (s, m, i) for p, s, m, i in rows}

    def keep_unlisted(self, stats: Mapping[str, Stat | None]) -> None:
        """Record the walked files that are no memory (an image, a file a scan skips) with their stats, so that a
        refresh can tell a new memory file from them without listing the tree again, and list it again when
        one of them changes (a link replaced by a file, a name deleted and made again)."""
        with self._guard(), self.db:
            self.db.execute("DELETE FROM unlisted")
            self.db.executemany(
                "INSERT INTO unlisted VALUES (?, ?, ?, ?)",
                ((p, *(st or (None, None, None))) for p, st in stats.items()),
            )

    def replace(self, sources: Iterable[str], docs: Iterable[Doc], stats: Mapping[str, Stat | None]) -> None:
        """Drop every doc read from ``sources``, add ``docs``, and record ``stats`` (None: the file is gone).

        One transaction: a reader never sees a file half indexed, and a killed refresh leaves the old index.
        ``docs`` may be a generator reading the memory a part at a time: they are staged in a temporary table
        ``STAGE`` at a time and sorted there by SQLite, so building the whole index holds one part in memory.
        """
        now = time.time_ns()
        self._df.clear()
        fields = ", ".join(DOC_FIELDS)
        with self._guard(), self.db:
            for chunk in _chunks(list(sources), 500):
                marks = ",".join("?" * len(chunk))
                self.db.execute(
                    f"INSERT INTO fts (fts, rowid, {', '.join(COLUMNS)}) SELECT 'delete', id, {', '.join(COLUMNS)} "
                    f"FROM docs WHERE source IN ({marks})",
                    chunk,
                )
                self.db.execute(f"DELETE FROM docs WHERE source IN ({marks})", chunk)
                self.db.execute(f"DELETE FROM names WHERE source IN ({marks})", chunk)
            before = self.db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0]
            self.db.execute(f"CREATE TEMP TABLE IF NOT EXISTS staged ({fields})")
            self.db.execute("DELETE FROM temp.staged")
            marks = ",".join("?" * len(DOC_FIELDS))
            iterator = iter(docs)
            while batch := list(itertools.islice(iterator, STAGE)):
                self.db.executemany("INSERT INTO names VALUES (?, ?, ?)", _name_rows(batch))
                self.db.executemany(
                    f"INSERT INTO temp.staged ({fields}) VALUES ({marks})",
                    ([getattr(d, f) for f in DOC_FIELDS] for d in batch),
                )
            # Oldest first: row ids then rise with the date, which lets ``search`` take the newest rows first.
            self.db.execute(
                f"INSERT INTO docs ({fields}) SELECT {fields} FROM temp.staged ORDER BY coalesce(ts, ''), rowid"
            )
            self.db.execute("DELETE FROM temp.staged")
            self.db.execute(
                f"INSERT INTO fts (rowid, {', '.join(COLUMNS)}) SELECT id, {', '.join(COLUMNS)} FROM docs WHERE id > ?",
                (before,),
            )
            gone = [p for p, st in stats.items() if st is None]
            self.db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in gone))
            self.db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)",
                ((p, st[0], -1 if st[1] >= now - RACY_NS else st[1], st[2]) for p, st in stats.items() if st),
            )
            count = self.db.execute("SELECT count(*) FROM docs").fetchone()[0]
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('docs', ?)", (str(count),))

    def note(self, key: str) -> str | None:
        """A value kept in the index's own table (``remember``), or None."""
        with self._guard():
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"note:{key}",)).fetchone()
        return row[0] if row else None

    def remember(self, key: str, value: str | None) -> None:
        with self._guard(), self.db:
            self.db.execute("DELETE FROM meta WHERE key = ?", (f"note:{key}",))
            if value is not None:
                self.db.execute("INSERT INTO meta VALUES (?, ?)", (f"note:{key}", value))

    def doc_count(self) -> int:
        """How many docs the index holds, as recorded by the last ``replace`` (counting them takes a scan)."""
        with self._guard():
            row = self.db.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()
        return int(row[0]) if row else 0

    def doc_freqs(self, words: Sequence[str]) -> dict[str, int]:
        """How many docs hold each word (as the tokenizer stems it), read from the index's vocabulary.

        The stems come from FTS5 itself, through a scratch table with the same tokenizer, so they always
        agree with what the index stored.
        """
        missing = [w for w in dict.fromkeys(words) if w not in self._df]
        for char in [w for w in missing if len(w) == 1 and UNSPACED_RUN.fullmatch(w)]:
            # One character of an unspaced script is asked for by prefix (``recall_query.unspaced_terms``): the
            # pairs it starts count, each once per doc holding it, which counts a doc holding two of them twice.
            with self._guard():
                sql = "SELECT coalesce(sum(doc), 0) FROM vocab WHERE term >= ? AND term < ?"
                self._df[char] = int(self.db.execute(sql, (char, chr(ord(char) + 1))).fetchone()[0])
            missing.remove(char)
        if missing:
            # The scratch writes open a transaction (sqlite3 begins one before DML), which would keep a shared
            # lock on the index file after this returns and make every pass refreshing it wait out the busy
            # timeout while a face sits between queries: ``with self.db`` ends it here.
            with self._guard(), self.db:
                self.db.execute("DELETE FROM temp.qtok")
                self.db.executemany("INSERT INTO temp.qtok (rowid, w) VALUES (?, ?)", enumerate(missing, 1))
                stems: dict[int, str] = dict(self.db.execute("SELECT doc, term FROM temp.qvocab"))
                for i, word in enumerate(missing, 1):
                    stem = stems.get(i)
                    row = self.db.execute("SELECT doc FROM vocab WHERE term = ?", (stem,)).fetchone() if stem else None
                    self._df[word] = int(row[0]) if row else 0
        return {w: self._df[w] for w in words}

    def search(
        self,
        terms: Sequence[Term],
        filters: Filters,
        limit: int,
        newest: int = 0,
        every: bool = False,
        rows: tuple[int, int] | None = None,
    ) -> list[Candidate]:
        """The ``limit`` best docs matching any of ``terms`` (``every``: all of them) under ``filters``, by
        weighted bm25 over those terms.

        Scoring costs about 0.7 microseconds per matching row, finding a match about a twentieth of that, so with
        ``newest`` set (and no filters) only the newest ``newest`` matches are scored: row ids rise with the
        date, and FTS5 walks a row-id range without scoring what lies outside it.
        """
        if not terms:
            return []
        match = (" AND " if every else " OR ").join(
            f"{{names grams}} : {t.expr}" if t.grams else f"{{body names extra}} : {t.expr}" for t in terms
        )
        where, params = _where(filters)
        columns = ", ".join("d." + f for f in ("id", *DOC_FIELDS))
        bm25 = f"bm25(fts, {', '.join(map(str, WEIGHTS))})"
        with self._guard():
            if where:
                sql = (
                    f"SELECT {columns}, {bm25} AS s FROM fts JOIN docs d ON d.id = fts.rowid "
                    f"WHERE fts MATCH ? {where} ORDER BY s LIMIT ?"
                )
                found = self.db.execute(sql, [match, *params, limit]).fetchall()
            else:
                floor, ceiling = (rows[0] - 1, rows[1]) if rows else (0, 1 << 62)
                if newest:
                    row = self.db.execute(
                        "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", (match, newest)
                    ).fetchone()
                    floor = row[0] if row else 0
                # Rank inside the index first, then fetch only the winners' rows.
                sql = (
                    f"SELECT {columns}, q.s FROM (SELECT rowid, {bm25} AS s FROM fts WHERE fts MATCH ? "
                    "AND rowid > ? AND rowid <= ? ORDER BY s LIMIT ?) q JOIN docs d ON d.id = q.rowid ORDER BY q.s"
                )
                found = self.db.execute(sql, (match, floor, ceiling, limit)).fetchall()
        return [Candidate(Doc(*row[1:-1]), -row[-1], row[0]) for row in found]

    def named(self, words: Iterable[str], most: int) -> dict[str, set[str]]:
        """What each of ``words`` names: entities (their memory path) and speaker labels (``@label``); a word
        naming more than ``most`` of them ("project") is left out, as it names none in particular."""
        found: dict[str, set[str]] = {}
        with self._guard():
            for word in dict.fromkeys(words):
                sql = "SELECT DISTINCT target FROM names WHERE word = ? LIMIT ?"
                targets = {row[0] for row in self.db.execute(sql, (word, most + 1))}
                if 0 < len(targets) <= most:
                    found[word] = targets
        return found

    def span(self, first: str, last: str) -> tuple[int, int] | None:
        """The lowest and highest row dated from ``first`` to ``last``: rows are added oldest first, so the
        rows of a period lie (mostly) in this range, which FTS5 can search without scoring the rest."""
        with self._guard():
            row = self.db.execute(
                "SELECT min(id), max(id) FROM docs WHERE ts >= ? AND ts < ?", (first, last + "~")
            ).fetchone()
        return (row[0], row[1]) if row and row[0] is not None else None

    def rows(self, ids: Iterable[int]) -> dict[int, Doc]:
        """The docs with these row ids (those that exist): a hit's neighbours in its file."""
        wanted = sorted({i for i in ids if i > 0})
        if not wanted:
            return {}
        columns = ", ".join(DOC_FIELDS)
        with self._guard():
            marks = ",".join("?" * len(wanted))
            rows = self.db.execute(f"SELECT id, {columns} FROM docs WHERE id IN ({marks})", wanted).fetchall()
        return {row[0]: Doc(*row[1:]) for row in rows}

    def known_names(self, words: Sequence[str]) -> list[str]:
        """Those of ``words`` the names table holds: one lookup for the many substrings of an unspaced question."""
        found: list[str] = []
        with self._guard():
            for chunk in _chunks(list(dict.fromkeys(words)), 500):
                marks = ",".join("?" * len(chunk))
                found += [
                    row[0] for row in self.db.execute(f"SELECT DISTINCT word FROM names WHERE word IN ({marks})", chunk)
                ]
        return found

    def entities(self) -> list[str]:
        with self._guard():
            return [row[0] for row in self.db.execute("SELECT DISTINCT entity FROM docs WHERE entity IS NOT NULL")]


def _name_rows(docs: Sequence[Doc]) -> Iterator[tuple[str, str, str]]:
    """The names table's rows: each word of an entity's names and of a line's speaker label, and what it names.

    A question names people and projects by the words of their names, which are in most of their own rows and
    so weigh next to nothing in bm25; this table lets the ranking see that a query word is a name.
    """
    seen: set[tuple[str, str, str]] = set()
    for doc in docs:
        named = [(doc.names, doc.entity)] if doc.entity and doc.kind in ("fact", "summary") else []
        if doc.speaker:
            named.append((doc.speaker, "@" + doc.speaker))
        for text, target in named:
            for word in name_words(text):
                row = (word, target, doc.source)
                if row not in seen:
                    seen.add(row)
                    yield row


def _where(filters: Filters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if filters.kinds:
        clauses.append(f"d.kind IN ({','.join('?' * len(filters.kinds))})")
        params += filters.kinds
    if filters.entities:
        clauses.append("(" + " OR ".join(["d.entity = ? OR d.entity LIKE ? ESCAPE '\\'"] * len(filters.entities)) + ")")
        for rel in filters.entities:
            escaped = rel.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params += [rel, escaped + "/%"]
    if filters.active_only:
        clauses.append("lower(coalesce(d.status, 'active')) = 'active'")
    if filters.since:
        clauses.append("d.ts >= ?")
        params.append(filters.since)
    if filters.until:
        clauses.append("d.ts < ?")
        params.append(filters.until + "~")  # any time on that day sorts below "~"
    return "".join(f" AND {c}" for c in clauses), params


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
