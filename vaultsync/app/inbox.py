"""The fact inbox for a plugin: the proposed facts waiting, and accepting or rejecting one.

A proposed fact (``"status": "proposed"``, docs/health.md) becomes memory when the person sets its status to
``active`` and is set aside with ``rejected``; in Obsidian that is an edit of the note's property. From a plugin
the same decision is one status change of the fact, made through the one write path (``app/memory.py``,
``app/write.py``): it takes the lock, honours ``If-Match`` and runs the pass that carries it into the vault and
commits it as the person's.
"""

from __future__ import annotations

from vaultsync.app import memory
from vaultsync.app.entities import list_entities
from vaultsync.app.facts import FactView, locate, read_items, records, view
from vaultsync.config import Config
from vaultsync.errors import Invalid, NotProposed, Unreadable
from vaultsync.model import PERSON

__all__ = ["DECISIONS", "NotProposed", "decide", "proposed"]

PROPOSED = "proposed"
DECISIONS = {"accept": "active", "reject": "rejected"}


def proposed(cfg: Config) -> list[FactView]:
    """Every fact whose status is ``proposed``, by entity then in file order.

    It reads each entity's ``items.json``: the inbox is opened by a person now and then, never per keystroke. An
    entity whose file cannot be read is left out here; a pass reports it."""
    found: list[FactView] = []
    for ref in list_entities(cfg):
        try:
            _, doc = read_items(cfg, ref.entity)
        except (Unreadable, Invalid):  # a pass reports it; it is no reason to hide the rest of the inbox
            continue
        found += [view(cfg, ref.entity, r) for _, r in records(doc) if r.get("status") == PROPOSED]
    return found


def decide(
    cfg: Config, fact_id: str, decision: str, *, entity: str | None = None, if_match: str | None = None
) -> memory.Written:
    """Accept (status ``active``) or reject (status ``rejected``) one proposed fact."""
    rel, _, record = locate(cfg, fact_id, entity)
    if record.get("status") != PROPOSED:
        raise NotProposed(f"fact {fact_id!r} of {rel} is {record.get('status', 'active')}, not proposed; nothing done")
    # The person's decision, whichever program relays it: committed as the person.
    return memory.patch(cfg, fact_id, {"status": DECISIONS[decision]}, entity=rel, if_match=if_match, actor=PERSON)
