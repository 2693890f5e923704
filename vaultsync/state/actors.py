"""Who made the memory changes still waiting for their commit: ``<vault>/.vaultsync/actors.json``.

A change made through the write path for someone other than the agent (an API client, the person's review fix)
is committed by the pass that follows it, as that actor. When that pass cannot commit (git's ``index.lock`` left
behind, a detached HEAD, a kill), a later pass commits the change, and without this record it would name the
agent. So the write path records, before the pass, the actor of each unit it changed (a fact when the write
knows which, else its entity, ``keys.owner_of``, or a mirrored file) and the subject its commit takes; whichever
pass commits that unit's notes commits them as the recorded actor and then drops the record. A unit no record
names is the agent's: its own edits between passes.

Only passes and writes under the run lock read or write it. An unreadable record counts as empty, and one that
cannot be written (a full disk) is let go: the changes are then committed as the agent's, which loses no text,
where failing the write or the pass over it would leave a person unsure what was saved.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from contextlib import suppress

from vaultsync.model import Actor
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write


def pending(files: StateFiles) -> dict[str, Actor]:
    """Unit key (a fact, an entity, a file) -> the actor whose change to it waits for a commit."""
    try:
        data = json.loads(files.actors.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    found = {owner: Actor.from_json(actor) for owner, actor in data.items()}
    return {owner: actor for owner, actor in found.items() if actor is not None}


def subjects(files: StateFiles) -> dict[Actor, str]:
    """The commit subject each recorded actor's write gave (a review fix's), for the commit a later pass makes."""
    try:
        data = json.loads(files.actors.read_bytes())
    except (OSError, ValueError):
        return {}
    found: dict[Actor, str] = {}
    for entry in data.values() if isinstance(data, dict) else ():
        actor = Actor.from_json(entry)
        subject = entry.get("subject") if isinstance(entry, dict) else None
        if actor is not None and isinstance(subject, str) and subject:
            found[actor] = subject
    return found


def claim(files: StateFiles, owners: Iterable[str], actor: Actor, subject: str = "") -> None:
    """Record ``actor`` (and the subject its commit takes, if any) as the maker of the changes to ``owners``,
    before any pass carries them."""
    wanted = set(owners)
    if not wanted:
        return
    known = pending(files)
    said = subjects(files)
    if subject:
        said[actor] = subject
    _save(files, known | dict.fromkeys(wanted, actor), said)


def settle(files: StateFiles, owners: Iterable[str]) -> None:
    """Forget the actors of ``owners``: their changes are committed."""
    known = pending(files)
    left = {owner: actor for owner, actor in known.items() if owner not in set(owners)}
    if len(left) != len(known):
        _save(files, left, subjects(files))


def _save(files: StateFiles, actors: Mapping[str, Actor], said: Mapping[Actor, str]) -> None:
    target = files.actors
    if not actors:
        with suppress(OSError):
            target.unlink(missing_ok=True)
        return
    body: dict[str, dict[str, str]] = {}
    for owner in sorted(actors):
        actor = actors[owner]
        body[owner] = actor.to_json() | ({"subject": said[actor]} if said.get(actor) else {})
    with suppress(OSError):
        atomic_write(target, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"))
