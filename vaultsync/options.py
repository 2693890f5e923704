"""The knobs of one change, which every face sets through the public surface (``vaultsync/api.py``): a plain value,
so a face can build one without reaching below the app layer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from vaultsync.model import AGENT, Actor, Conflict, Progress


@dataclass(frozen=True)
class PassOptions:
    dry_run: bool = False
    confirm_deletes: bool = False
    today: date | None = None
    now: Callable[[], datetime] = datetime.now
    progress: Progress | None = None  # told of each action applied; the CLI draws a bar on a terminal
    import_batch: int = 100  # entities a first import reads and writes at a time (0: all at once)
    import_workers: int = 0  # processes a first import in batches forks (0: one per core, up to 4; 1: none)
    full_batch: int = 100  # entities a full pass over a larger memory reads and writes at a time (0: all at once)
    # What a use case that changed the memory before the pass (the janitor, a review fix) says it did: the
    # subject of the agent's commit, with the pass's own account of the changes below it.
    commit_subject: str = ""
    # Memory files a caller changed and knows to be the only memory change worth carrying now, as walk keys
    # (``life/areas/people/sarah/items.json``): a memory write through the write path (``app/write.py``).
    # The quick check then stats these instead of walking every memory folder, which at 50k facts is most of
    # a write's check. Safe when the claim is wrong: the snapshot keeps the old entries of the files not
    # looked at, so the next plain pass's walk still finds anything else changed. Ignored (a whole walk) when
    # the snapshot cannot vouch for the rest: none, another config's, a dry run.
    changed_memory: frozenset[str] | None = None
    # Who the memory side's commit is made for: the agent, the person (a review fix, an inbox decision) or an
    # API client by name. The person's own vault edits are always committed as the person.
    actor: Actor = AGENT
    # True when the write path recorded ``actor`` as the maker of the memory files the use case changed
    # (``state/actors.py``): every other change the pass carries is then the agent's, not the actor's.
    claimed: bool = False
    # Unit keys a use case changed on purpose before the pass (the janitor's archived daily notes and the
    # MEMORY.md it cut): the shrink guard never holds them, while every other guard (a missing folder, an
    # emptied side) stands.
    deleting: frozenset[str] = frozenset()
    # Held changes the person lets through this pass (``vaultsync accept``): vault paths or scopes as the guard
    # names them, or "all".
    accept: frozenset[str] = frozenset()
    # Unit keys whose vault note wins on both sides this pass (``vaultsync restore``: the note was just put back
    # from git), whatever the memory holds.
    restore: frozenset[str] = frozenset()
    # Conflict copies the remote round made before the pass (a file changed here and on the remote): the pass
    # keeps them with its own, so they stay open, and exit 1, until the person deletes them.
    conflicts: tuple[Conflict, ...] = ()
