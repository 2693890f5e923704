"""The recall index's embeddings: one vector per distinct text, for the optional semantic re-ranker.

A vector is keyed by a hash of the model's name and the text, so an unchanged text is never embedded again,
a text two pieces share is embedded once, and another model's vectors are never compared with this one's.
Each is stored unit length and quantised to signed bytes with one scale (384 dimensions: 384 bytes and a
float, against 3 KB as floats), which moves a cosine by about 0.01 at most. They live in the index's own
``vectors`` table: an index built again keeps none, and they are made again in the background.
"""

from __future__ import annotations

import hashlib
import math
import operator
import sqlite3
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from vaultsync.state.recall import DOC_FIELDS, Doc, IndexBroken, RecallIndex

Vector = tuple[float, bytes]  # scale, the signed bytes


def key(model: str, text: str) -> str:
    return hashlib.sha1(f"{model}\n{text}".encode(), usedforsecurity=False).hexdigest()


def quantise(values: Sequence[float]) -> Vector:
    """``values`` as unit length signed bytes and the scale that gives each byte back its float."""
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    top = max(abs(v) for v in values) / norm or 1.0
    scale = top / 127
    return scale, array("b", (round(v / norm / scale) for v in values)).tobytes()


def cosine(a: Vector, b: Vector) -> float:
    """The cosine of two stored vectors (both unit length before quantising)."""
    return a[0] * b[0] * sum(map(operator.mul, array("b", a[1]), array("b", b[1])))


@dataclass(frozen=True)
class Coverage:
    embedded: int  # distinct texts with a vector of this model
    texts: int  # distinct texts in the index


def texts(index: RecallIndex) -> Iterator[str]:
    """Every distinct text the index holds."""
    try:
        yield from (row[0] for row in index.db.execute("SELECT DISTINCT body FROM docs"))
    except sqlite3.DatabaseError as exc:  # raised while iterating, after the guard of a call
        raise IndexBroken(str(exc)) from exc


def missing(index: RecallIndex, model: str) -> list[tuple[str, str]]:
    """The (key, text) of every text without a vector of ``model``."""
    have = _keys(index)
    wanted = {key(model, t): t for t in texts(index)}
    return [(k, t) for k, t in wanted.items() if k not in have]


def coverage(index: RecallIndex, model: str) -> Coverage:
    have = _keys(index)
    keys = [key(model, t) for t in texts(index)]
    return Coverage(sum(1 for k in keys if k in have), len(keys))


def store(index: RecallIndex, rows: Iterable[tuple[str, Vector]]) -> None:
    """Keep these vectors, one transaction: a batch is all there or not at all."""
    with index._guard(), index.db:
        index.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", ((k, s, v) for k, (s, v) in rows))


def prune(index: RecallIndex, model: str) -> int:
    """Drop the vectors no text of the index has any more (a changed or deleted text, another model's);
    how many went."""
    keep = {key(model, t) for t in texts(index)}
    gone = [k for k in _keys(index) if k not in keep]
    with index._guard(), index.db:
        index.db.executemany("DELETE FROM vectors WHERE key = ?", ((k,) for k in gone))
    return len(gone)


def load(index: RecallIndex, keys: Iterable[str] | None = None) -> dict[str, Vector]:
    """The vectors of ``keys`` (those stored), or every vector."""
    with index._guard():
        if keys is None:
            return {k: (s, v) for k, s, v in index.db.execute("SELECT key, scale, vec FROM vectors")}
        found: dict[str, Vector] = {}
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            sql = f"SELECT key, scale, vec FROM vectors WHERE key IN ({','.join('?' * len(chunk))})"
            found.update({k: (s, v) for k, s, v in index.db.execute(sql, chunk)})
        return found


def _keys(index: RecallIndex) -> set[str]:
    with index._guard():
        return {row[0] for row in index.db.execute("SELECT key FROM vectors")}


def docs_of(index: RecallIndex, bodies: Sequence[str]) -> list[tuple[int, Doc]]:
    """The row id and doc of every piece whose text is one of ``bodies``: what a nearest vector stands for."""
    if not bodies:
        return []
    columns = ", ".join(DOC_FIELDS)
    with index._guard():
        sql = f"SELECT id, {columns} FROM docs WHERE body IN ({','.join('?' * len(bodies))})"
        return [(row[0], Doc(*row[1:])) for row in index.db.execute(sql, list(bodies))]
