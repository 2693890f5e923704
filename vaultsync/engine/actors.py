"""The agent's commit of a pass, split by who made each change (``state/actors.py``).

A pass carries whatever memory changes it finds, whoever made them: the API write that started it, an earlier
write whose commit git refused, the agent's own edits between passes. Each goes into a commit of its own maker:
the note of a unit the record names (a fact, an entity, a mirrored file) is that actor's; the note of any other
unit with a change of its own is the pass's default actor's (the agent, unless the write that started the pass
named no units of its own); a note only refreshed because of other changes (an entity's counts, related links)
follows them when one actor made every change of the pass, else the default's. The agent's and the person's
commits come first, so what they did between passes is never inside an API write's commit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from vaultsync.keys import owner_of, scope_of
from vaultsync.model import Actor, SideChange
from vaultsync.vault.layout import VaultLayout

Keyed = list[tuple[str, SideChange]]  # a change with its unit's key ("" when the strategy does not know it)


@dataclass
class Share:
    """What one actor's commit of a pass takes: its notes, its changes (for the message), the scopes touched."""

    actor: Actor
    paths: set[str] = field(default_factory=set)
    changes: list[SideChange] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)


def shares(
    layout: VaultLayout,
    recorded: Mapping[str, Actor],
    default: Actor,
    paths: Collection[str],
    changes: Keyed,
    touched: list[str],
) -> list[Share]:
    """The pass's agent commit as one ``Share`` per actor, the agent's and the person's first; one share, the
    default's, with every path, change and touched scope, when no record names any of its units (the common
    pass)."""

    if not recorded:  # the common pass: every note is the default's, and no note is looked at (a first import's 50k)
        return [Share(default, set(paths), [c for _, c in changes], list(touched))]

    def maker(key: str) -> Actor | None:
        return recorded.get(key) or recorded.get(owner_of(key)) if key else None

    own = {key for key, _ in changes}
    by_scope: dict[str, set[Actor]] = {}
    for key, change in changes:
        by_scope.setdefault(change.scope, set()).add(maker(key) or default)
    makers = set().union(*by_scope.values())
    anyone = next(iter(makers)) if len(makers) == 1 else default

    def follower(key: str | None) -> Actor:
        """Who a note refreshed only for other units' changes goes with: the one maker of its scope's changes,
        else the one maker of the pass's, else the default."""
        near = by_scope.get(scope_of(key), set()) if key else set()
        return next(iter(near)) if len(near) == 1 else anyone

    split: dict[Actor, Share] = {}

    def share(actor: Actor) -> Share:
        return split.setdefault(actor, Share(actor))

    units: dict[str, str | None] = {path: layout.unit_of_note(path) for path in paths}
    for path, key in units.items():
        found = maker(key) if key else None
        share(found or (default if key in own else follower(key))).paths.add(path)
    for key, change in changes:
        share(maker(key) or default).changes.append(change)
    if len(split) <= 1:
        only = share(default if not split else next(iter(split)))
        only.touched = list(touched)
        return [only]
    for part in split.values():
        scopes = {scope_of(key) for path in part.paths if (key := units[path])}
        part.touched = sorted(scopes - {c.scope for c in part.changes})
    return sorted(split.values(), key=_order)


def carried(layout: VaultLayout, recorded: Collection[str], paths: Collection[str], changes: Keyed) -> list[str]:
    """The recorded units a pass committed: those whose notes it committed or whose changes it carried."""
    if not recorded:
        return []
    done = {key for key, _ in changes} | {key for path in paths if (key := layout.unit_of_note(path))}
    done |= {owner_of(key) for key in done if key}
    return [unit for unit in recorded if unit in done]


def _order(share: Share) -> tuple[bool, bool, str, str, str]:
    actor = share.actor
    return actor.kind != "agent", actor.kind != "person", actor.label(), actor.agent, actor.session
