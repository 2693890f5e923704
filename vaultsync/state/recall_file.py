"""The recall index's file: its schema, and opening it.

An index is only a cache of the memory trees, so opening one never migrates: a missing file, one written by
another schema version, or one SQLite cannot read is replaced by a new empty one, which the caller fills by
reading every memory file. Kept apart from ``vaultsync.state.recall``, which stores and searches an open index.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vaultsync.state.recall import COLUMNS, TOKENIZER, RecallIndex

SCHEMA_VERSION = 5  # bump when what is stored changes: an index of another version is rebuilt
SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER);
CREATE TABLE unlisted (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER);
CREATE TABLE docs (
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, kind TEXT NOT NULL, root TEXT NOT NULL, path TEXT NOT NULL,
    first_line INTEGER, last_line INTEGER, fact_id TEXT, entity TEXT, status TEXT, superseded_by TEXT,
    ts TEXT, vault_path TEXT, body TEXT NOT NULL, names TEXT NOT NULL, extra TEXT NOT NULL, grams TEXT NOT NULL,
    speaker TEXT
);
CREATE INDEX docs_source ON docs (source);
CREATE TABLE names (word TEXT NOT NULL, target TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX names_word ON names (word);
CREATE INDEX names_source ON names (source);
CREATE INDEX docs_ts ON docs (ts);
CREATE VIRTUAL TABLE fts USING fts5 (
    {", ".join(COLUMNS)}, content='docs', content_rowid='id', tokenize='{TOKENIZER}'
);
CREATE VIRTUAL TABLE vocab USING fts5vocab (fts, 'row');
CREATE TABLE vectors (key TEXT PRIMARY KEY, scale REAL NOT NULL, vec BLOB NOT NULL);
"""


def open_index(path: Path) -> tuple[RecallIndex, bool]:
    """Open the index at ``path``, making a new empty one when it is missing, of another schema version or
    unreadable. Returns the index and whether it was (re)made empty, which means every file must be read."""
    if path.exists():
        try:
            db = _connect(path)
            version = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if version and version[0] == str(SCHEMA_VERSION):
                return RecallIndex(db), False
            db.close()
        except sqlite3.DatabaseError:
            pass
    for stale in (path, path.with_name(path.name + "-journal"), path.with_name(path.name + "-wal")):
        stale.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = _connect(path)
    with db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    _scratch(db)
    return RecallIndex(db), True


def scratch_index() -> RecallIndex:
    """A new empty index in memory, gone when closed: for a vault where no file can be written (a read-only
    snapshot), so that recall still answers, at the cost of reading the whole memory for each query."""
    db = sqlite3.connect(":memory:")
    with db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    _scratch(db)
    return RecallIndex(db)


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=10)
    db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'").fetchone()[0]:
        _scratch(db)
    return db


def _scratch(db: sqlite3.Connection) -> None:
    """The scratch table ``doc_freqs`` stems query words with: in the temp schema, never written to the file."""
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.qtok USING fts5 (w, tokenize='{TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.qvocab USING fts5vocab (temp, qtok, 'instance')")
