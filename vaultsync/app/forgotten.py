"""Whether a fact the memory does not hold now was ever held: what lets a repeated forget answer "gone already"
(200) instead of "no such fact" (404).

Two records say so, both kept by vaultsync itself, so nothing is guessed from names: the base's list of every id
an entity has used (a pass adds each id it sees and never takes one out; it is also what keeps a forgotten id from
being given to a new fact), and the trash, which keeps the record of each fact forgotten through a write
(``trash/<time>/forgotten/<entity>/<id>.json``). A fact an agent added and removed again between two passes
left neither, and is answered as never known.
"""

from __future__ import annotations

import sqlite3
from glob import escape

from vaultsync.app.facts import resolve
from vaultsync.config import Config
from vaultsync.errors import Ambiguous, Invalid, NotFound
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles


def once_held(cfg: Config, fact_id: str, entity: str | None = None) -> bool:
    """True when ``fact_id`` (of ``entity``, when given; of any entity otherwise) was held once and is gone."""
    rel: str | None = None
    if entity is not None:
        try:
            rel = resolve(cfg, entity)
        except (NotFound, Ambiguous, Invalid):
            return False
    return _in_base(cfg, fact_id, rel) or _in_trash(cfg, fact_id, rel)


def _in_base(cfg: Config, fact_id: str, rel: str | None) -> bool:
    path = StateFiles(cfg.state_dir).base
    if not path.exists():
        return False
    try:
        store = BaseStore(path, read_only=True)
    except sqlite3.Error:
        return False
    try:
        holders = store.holders(fact_id)
    except sqlite3.Error:  # a damaged base answers nothing; the trash may still know
        return False
    finally:
        store.close()
    return rel in holders if rel is not None else bool(holders)


def _in_trash(cfg: Config, fact_id: str, rel: str | None) -> bool:
    trashes = StateFiles(cfg.state_dir).trashes
    where = escape(rel) if rel is not None else "**"
    return any(trashes.glob(f"*/forgotten/{where}/{escape(fact_id)}.json"))
