"""The agent's commit of a pass, split by who made each change (``state/actors.py``).

A pass carries whatever memory changes it finds, whoever made them: the API write that started it, an earlier
write whose commit git refused, the agent's own edits between passes. Each goes into a commit of its own maker:
the notes of a unit the record names are that actor's; the notes of any other unit with a change of its own are
the pass's default actor's (the agent, unless the write that started the pass names no units of its own); a
note only refreshed because of another unit's change (counts, related links) follows that change when one actor
made every change of the pass, else the default's. The agent's and the person's commits come first, so what they
did between passes is never inside an API write's commit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from vaultsync.keys import scope_of
from vaultsync.model import Actor, SideChange
from vaultsync.vault.layout import VaultLayout


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
    changes: list[SideChange],
    touched: list[str],
) -> list[Share]:
    """The pass's agent commit as one ``Share`` per actor, the agent's and the person's first; one share, the
    default's, when no record names any of its units (the common pass)."""
    by_scope = {scope_of(owner): actor for owner, actor in recorded.items()}
    changed = {c.scope for c in changes}
    makers = {by_scope.get(scope, default) for scope in changed}
    follower = next(iter(makers)) if len(makers) == 1 else default

    def actor_of(scope: str | None) -> Actor:
        if scope is None:
            return follower
        return by_scope.get(scope) or (default if scope in changed else follower)

    split: dict[Actor, Share] = {}
    for path in paths:
        owner = layout.owner_of_note(path)
        actor = actor_of(scope_of(owner) if owner else None)
        split.setdefault(actor, Share(actor)).paths.add(path)
    for change in changes:
        actor = actor_of(change.scope)
        split.setdefault(actor, Share(actor)).changes.append(change)
    for scope in touched:
        actor = actor_of(scope)
        split.setdefault(actor, Share(actor)).touched.append(scope)
    return sorted(split.values(), key=_order)


def _order(share: Share) -> tuple[bool, bool, str, str, str]:
    actor = share.actor
    return actor.kind != "agent", actor.kind != "person", actor.label(), actor.agent, actor.session
