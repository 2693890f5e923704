"""The public surface: what the faces (the command line, watch, the HTTP API, the MCP server) and plugins call.

Two ways in, over the same use cases:

- ``Vault(config)``: one object per vault, one method per use case (``vault.sync()``, ``vault.remember(...)``),
  for a program using vaultsync as a library;
- the names in ``__all__``, the use cases as functions and the values and errors they take and raise, for the
  faces, which pass the config themselves.

Everything else in the package is private to it. Each name is imported only when first used (``__getattr__``),
so a command that needs the sync pass never loads the HTTP server's, the recall index's or the review's code,
and a pass with nothing to do starts in the time a bare interpreter does.
"""

from __future__ import annotations

import importlib
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultsync.app.memory import Written
    from vaultsync.config import Config
    from vaultsync.model import Actor, Report
    from vaultsync.options import PassOptions

# Each public name and the app module (or leaf) it lives in; tests/test_layers.py reads this table.
_SURFACE = {
    # passes
    "PassOptions": "vaultsync.options",
    "sync": "vaultsync.app.sync",
    "status": "vaultsync.app.sync",
    "overview": "vaultsync.app.sync",
    "recent_runs": "vaultsync.app.sync",
    "summary": "vaultsync.app.sync",
    "git_missing": "vaultsync.app.sync",
    "watch": "vaultsync.app.watch",
    # memory writes and reads
    "memory": "vaultsync.app",
    "entities": "vaultsync.app",
    "workspace": "vaultsync.app",
    "inbox": "vaultsync.app",
    "conflicts": "vaultsync.app",
    "review_notes": "vaultsync.app",
    "obsidian": "vaultsync.app",
    "Recaller": "vaultsync.app.recall",
    "RecallOptions": "vaultsync.app.recall",
    "parse_kinds": "vaultsync.app.recall",
    "recall": "vaultsync.app.recall",
    "history": "vaultsync.app.history",
    "capture": "vaultsync.app",
    "context": "vaultsync.app.context",
    "BUDGET": "vaultsync.app.context",
    # the memory's upkeep
    "janitor": "vaultsync.app.janitor",
    "review": "vaultsync.app",
    "extract": "vaultsync.app.extract",
    # setting up
    "init_vault": "vaultsync.app.init",
    "load_token": "vaultsync.app.init",
    "schedule": "vaultsync.app",
    "absolute_config": "vaultsync.app.schedule",
    "write_log": "vaultsync.app.schedule",
    # errors: one family (kind, field, hint), rendered from one table
    "VaultsyncError": "vaultsync.errors",
    "LockHeld": "vaultsync.write_path.write",
    "Stopped": "vaultsync.write_path.write",
    "Stale": "vaultsync.app.memory",
    "Invalid": "vaultsync.app.facts",
    "NotFound": "vaultsync.app.facts",
    "Ambiguous": "vaultsync.app.facts",
    "Unreadable": "vaultsync.app.facts",
    "UsageError": "vaultsync.app.recall",
    "HistoryError": "vaultsync.app.history",
    "refused": "vaultsync.system.faults",  # a full or read-only disk, in one line
}

__all__ = ["Vault", *_SURFACE]


def __getattr__(name: str) -> Any:
    where = _SURFACE.get(name)
    if where is None:
        raise AttributeError(f"module 'vaultsync.api' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = getattr(module, name) if hasattr(module, name) else importlib.import_module(f"{where}.{name}")
    globals()[name] = value
    return value


class Vault:
    """One vault, its config loaded: each method is one use case, a change going through the one write path.

    ``actor`` names who a memory write is for (``model.client("openclaw")`` for a program), as git will show it;
    the agent by default."""

    def __init__(self, config: Config, actor: Actor | None = None) -> None:
        from vaultsync.model import AGENT

        self.config = config
        self.actor = actor or AGENT

    def sync(self, options: PassOptions | None = None, kind: str = "sync") -> Report:
        from vaultsync.app.sync import sync

        return sync(self.config, options, kind)

    def status(self, options: PassOptions | None = None) -> Report:
        from vaultsync.app.sync import status

        return status(self.config, options)

    def remember(self, entity: str, fact: str, fields: dict[str, Any] | None = None, create: bool = False) -> Written:
        from vaultsync.app.memory import remember

        return remember(self.config, entity, fact, fields, create=create, actor=self.actor)

    def supersede(self, fact_id: str, **given: Any) -> Written:
        from vaultsync.app.memory import supersede

        return supersede(self.config, fact_id, actor=self.actor, **given)

    def forget(self, fact_id: str, **given: Any) -> Written:
        from vaultsync.app.memory import forget

        return forget(self.config, fact_id, actor=self.actor, **given)

    def patch(self, fact_id: str, changes: dict[str, Any], **given: Any) -> Written:
        from vaultsync.app.memory import patch

        return patch(self.config, fact_id, changes, actor=self.actor, **given)

    def entity(self, entity: str) -> Any:
        from vaultsync.app.entities import get_entity

        return get_entity(self.config, entity)

    def recall(self, query: str, options: Any = None) -> Any:
        from vaultsync.app.recall import RecallOptions, recall

        return recall(self.config, query, options or RecallOptions())

    def history(self, target: str | None = None, **given: Any) -> Any:
        from vaultsync.app.history import history

        return history(self.config, target, **given)

    def janitor(self, dry_run: bool = False, today: date | None = None) -> Any:
        from vaultsync.app.janitor import janitor

        return janitor(self.config, dry_run, today)

    def review(self, today: date | None = None) -> Any:
        from vaultsync.app.review import review

        return review(self.config, today)

    def fix(self, today: date | None = None) -> Any:
        from vaultsync.app.review import fix

        return fix(self.config, today)

    def extract(self, dry_run: bool = False, today: date | None = None) -> Any:
        from vaultsync.app.extract import extract

        return extract(self.config, dry_run, today)
