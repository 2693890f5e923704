"""The base: what each unit held when both sides last agreed, kept in vaultsync's private state folder.

It stores contents, not only fingerprints, because a three-way merge needs the common ancestor. It is never
the vault repo's HEAD: obsidian-git and the person move HEAD at will. SQLite makes each save atomic, so a pass
killed mid-way leaves the previous base intact and the next pass converges from there.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from vaultsync.keys import ALL_FACTS, entity_key, fact_range, file_key, is_fact, mem_path_of, note_of
from vaultsync.names import fold
from vaultsync.state.entry import BaseEntry, json_text
from vaultsync.system import disk

SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    key TEXT PRIMARY KEY, data BLOB NOT NULL, extra TEXT NOT NULL DEFAULT '{}', stem TEXT
);
CREATE TABLE IF NOT EXISTS ids (entity TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (entity, id));
CREATE TABLE IF NOT EXISTS conflicts (path TEXT PRIMARY KEY, key TEXT NOT NULL, detail TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS reported (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# A fact note's name as wiki-links compare names (``fact_stem``), indexed so that a scoped pass can count the
# notes sharing a name without reading every key (53,000 at 50k facts).
STEMS = "CREATE INDEX IF NOT EXISTS units_stem ON units (stem) WHERE stem IS NOT NULL"
FACTS = f"key >= '{ALL_FACTS[0]}' AND key < '{ALL_FACTS[1]}'"  # every fact unit's key, as a range of the primary key


UnitRow = tuple[str, bytes, str, str | None]  # a row of the units table: key, data, extra, stem


def unit_rows(upserts: Mapping[str, BaseEntry]) -> list[UnitRow]:
    """The rows ``save`` writes for ``upserts``, made where the entries are: a first import's workers encode
    their batches' 53k rows (at 50k facts) while the parent only hands them to SQLite."""
    return [(k, e.data, json_text(e.extra), fact_stem(k)) for k, e in upserts.items()]


def fact_stem(key: str) -> str | None:
    """The name of a fact unit's note in the form two names collide in (``note_stem`` of ``fact_note``);
    None for other units, whose note names a scoped pass counts from their keys."""
    return fold(note_of(key)) if is_fact(key) else None


class BaseUnreadable(RuntimeError):
    """The base file is there but SQLite cannot read it (overwritten, truncated, another program's file).

    Starting from an empty base instead would read every difference between the sides as a new edit with no
    common ancestor, so the pass stops and the message says how the person chooses to start over.
    """

    def __init__(self, path: Path, cause: Exception) -> None:
        super().__init__(
            f"the base {path} cannot be read ({cause}); nothing was written. If it came from a backup, put that back; "
            f"otherwise move it aside (mv '{path}' '{path}.broken') and run the pass again: it then adopts what "
            "both sides agree on and keeps both versions of what differs (docs/safety.md: A broken base)"
        )


class BaseStore:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        """Open the base; ``read_only`` (for --dry-run) never creates or changes a file. Raises BaseUnreadable."""
        self.path = path
        try:
            self._open(path, read_only)
        except sqlite3.DatabaseError as exc:
            if disk.full(exc) or disk.read_only(exc):
                raise  # the disk refused a write: the file is fine, and moving it aside would lose the base
            raise BaseUnreadable(path, exc) from None

    def _open(self, path: Path, read_only: bool) -> None:
        if read_only and path.exists():
            self.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            return
        if read_only:
            self.db = sqlite3.connect(":memory:")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        if not self.stems():  # a base from before fact note names were kept: named once, in one transaction
            with self.db:
                self.db.execute("ALTER TABLE units ADD COLUMN stem TEXT")
                keys = self.db.execute(f"SELECT key FROM units WHERE {FACTS}").fetchall()
                self.db.executemany("UPDATE units SET stem = ? WHERE key = ?", ((fact_stem(k), k) for (k,) in keys))
        self.db.execute(STEMS)

    def stems(self) -> bool:
        """Whether this base keeps fact note names (a read-only one from before cannot be given them)."""
        return any(row[1] == "stem" for row in self.db.execute("PRAGMA table_info(units)"))

    def close(self) -> None:
        self.db.close()

    def commit(self) -> None:
        self.db.commit()

    def compact(self) -> None:
        """Rewrite the file with each table and index in consecutive pages (SQLite's ``VACUUM``).

        A first import writes the rows and their key index a page at a time, side by side, so each ends up
        spread over the whole file, and a scoped pass, which reads every key, then reads from all over a cold
        disk, several times slower than from a compacted file (benchmarks/history.md). Rewriting is paid once.
        It only
        saves time, and ``VACUUM`` is all or nothing: one that fails (no room for its copy) leaves the base as
        it was, and the pass goes on.
        """
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("VACUUM")

    def load(self, keys: Iterable[str] | None = None) -> dict[str, BaseEntry]:
        """Every unit, or only ``keys`` (a scoped pass reads the few units it touches)."""
        if keys is None:
            rows = self.db.execute("SELECT key, data, extra FROM units")
            return {key: BaseEntry(bytes(data), json.loads(extra)) for key, data, extra in rows}
        found = {}
        for key in keys:
            for data, extra in self.db.execute("SELECT data, extra FROM units WHERE key = ?", (key,)):
                found[key] = BaseEntry(bytes(data), json.loads(extra))
        return found

    def empty(self) -> bool:
        return self.db.execute("SELECT 1 FROM units LIMIT 1").fetchone() is None

    def facts(self) -> Iterator[tuple[str, bytes]]:
        """Every fact unit's key and JSON, one row at a time: at 200k facts they would not fit in memory twice."""
        for key, data in self.db.execute(f"SELECT key, data FROM units WHERE {FACTS}"):
            yield key, bytes(data)

    def keys(self) -> list[str]:
        return [key for (key,) in self.db.execute("SELECT key FROM units")]

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM units").fetchone()[0])

    def keys_of(self, rels: Iterable[str], files: Iterable[str]) -> list[str]:
        """The keys of the units of entities ``rels`` and of memory files ``files``, without reading the others."""
        found = []
        for rel in rels:
            # Every key starting "fact:<rel>#": '$' follows '#', and the order is that of the UTF-8 bytes.
            query = "SELECT key FROM units WHERE key >= ? AND key < ?"
            found += [key for (key,) in self.db.execute(query, fact_range(rel))]
            found += [key for (key,) in self.db.execute("SELECT key FROM units WHERE key = ?", (entity_key(rel),))]
        for path in files:
            found += [key for (key,) in self.db.execute("SELECT key FROM units WHERE key = ?", (file_key(path),))]
        return found

    def files(self) -> frozenset[str]:
        """The memory paths of the file units (``file:<path>``)."""
        query = "SELECT key FROM units WHERE key >= 'file:' AND key < 'file;'"
        return frozenset(mem_path_of(key) for (key,) in self.db.execute(query))

    def stem_count(self, stem: str) -> int:
        """How many fact notes are named ``stem`` (``fact_stem``)."""
        return int(self.db.execute("SELECT count(*) FROM units WHERE stem = ?", (stem,)).fetchone()[0])

    def fact_keys_named(self, stem: str) -> list[str]:
        """The keys of the fact units whose note is named ``stem`` (``fact_stem``): where an id lives, by index."""
        return [key for (key,) in self.db.execute("SELECT key FROM units WHERE stem = ?", (stem,))]

    def ids(self, entities: Iterable[str] | None = None) -> dict[str, set[str]]:
        """Fact ids each entity has used, so a new fact never gets one again; all entities', or ``entities``'."""
        seen: dict[str, set[str]] = {}
        if entities is None:
            rows = list(self.db.execute("SELECT entity, id FROM ids"))
        else:
            query = "SELECT entity, id FROM ids WHERE entity = ?"
            rows = [row for entity in entities for row in self.db.execute(query, (entity,))]
        for entity, fact_id in rows:
            seen.setdefault(entity, set()).add(fact_id)
        return seen

    def holders(self, fact_id: str) -> set[str]:
        """The entities that have ever used ``fact_id``: a forget repeated after the fact is gone finds it here."""
        return {entity for (entity,) in self.db.execute("SELECT entity FROM ids WHERE id = ?", (fact_id,))}

    def conflicts(self) -> dict[str, tuple[str, str]]:
        return {p: (k, d) for p, k, d in self.db.execute("SELECT path, key, detail FROM conflicts")}

    def layout(self) -> str | None:
        """The vault layout (``[vault]`` folder names, as JSON) the base was last saved with; None when unknown
        (a base from before it was kept): every synced unit's note is where that layout puts it."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name = 'layout'").fetchone()
        except sqlite3.OperationalError:  # a read-only look at a base from before the table
            return None
        return row[0] if row else None

    def reported(self) -> set[str]:
        return {p for (p,) in self.db.execute("SELECT path FROM reported")}

    def save(
        self,
        upserts: Mapping[str, BaseEntry],
        deletes: Iterable[str],
        ids: Iterable[tuple[str, str]] = (),
        conflicts: Mapping[str, tuple[str, str]] | None = None,
        resolved: Iterable[str] = (),
        reported: Iterable[str] = (),
        *,
        rows: Iterable[UnitRow] = (),
        commit: bool = True,
        layout: str | None = None,
    ) -> None:
        """Record one pass's outcome in a single transaction: all of it or none of it. ``rows`` are more
        upserts, made by ``unit_rows``; ``layout`` is the vault layout the units were synced with.

        ``commit=False`` leaves the transaction open for more (a first import saves batch by batch and commits
        once, after the git commit); ``commit()`` or ``close()`` (which discards it) ends it.
        """
        with self.db if commit else contextlib.nullcontext():
            self.db.executemany("DELETE FROM units WHERE key = ?", ((k,) for k in deletes))
            self.db.executemany(
                "INSERT OR REPLACE INTO units (key, data, extra, stem) VALUES (?, ?, ?, ?)",
                itertools.chain(unit_rows(upserts), rows),
            )
            self.db.executemany("INSERT OR IGNORE INTO ids (entity, id) VALUES (?, ?)", ids)
            self.db.executemany(
                "INSERT OR REPLACE INTO conflicts (path, key, detail) VALUES (?, ?, ?)",
                ((p, k, d) for p, (k, d) in (conflicts or {}).items()),
            )
            self.db.executemany("DELETE FROM conflicts WHERE path = ?", ((p,) for p in resolved))
            self.db.executemany("INSERT OR IGNORE INTO reported (path) VALUES (?)", ((p,) for p in reported))
            if layout is not None:
                self.db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('layout', ?)", (layout,))
