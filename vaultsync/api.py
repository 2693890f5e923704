"""The public surface: what the faces (the command line, watch, the HTTP API, the MCP server) and plugins call.

Two ways in, over the same use cases:

- ``Vault(config)``: one object per vault, one method per use case (``vault.sync()``, ``vault.remember(...)``),
  for a program using vaultsync as a library;
- the names in ``__all__``: the use cases as functions, and the values and errors they take, return and raise,
  for the faces, which pass the config themselves. Every name is a function, a class or a value, never a module.

Everything else in the package is private to it. Each name is imported only when first used (``__getattr__``),
so a command that needs the sync pass never loads the HTTP server's, the recall index's or the review's code,
and a pass with nothing to do starts in the time a bare interpreter does. Editors and type checkers read the
same names from the ``TYPE_CHECKING`` imports below; ``tests/test_layers.py`` keeps the two lists equal.
"""

from __future__ import annotations

import importlib
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultsync.app.answers import Answer, Answers, fingerprint
    from vaultsync.app.capture import Captured, append_daily
    from vaultsync.app.conflicts import OpenConflict, Resolved, open_conflicts
    from vaultsync.app.conflicts import resolve as resolve_conflict
    from vaultsync.app.context import BUDGET, Context, context
    from vaultsync.app.discover import Found, FoundVault, FoundWorkspace, life_of
    from vaultsync.app.discover import find as find_setup
    from vaultsync.app.doctor import Check, Diagnosis, diagnose
    from vaultsync.app.entities import Entity, count_facts, get_entity, get_fact, list_entities
    from vaultsync.app.extract import ExtractResult, extract
    from vaultsync.app.held import accept, restore
    from vaultsync.app.history import History, HistoryChange, history
    from vaultsync.app.inbox import decide as decide_proposed
    from vaultsync.app.inbox import proposed as proposed_facts
    from vaultsync.app.init import InitResult, init_vault, load_token
    from vaultsync.app.janitor import JanitorResult, janitor
    from vaultsync.app.memory import Written, forget, patch, remember, supersede
    from vaultsync.app.obsidian import DEFAULT_URL as OBSIDIAN_URL
    from vaultsync.app.obsidian import Installed
    from vaultsync.app.obsidian import install as install_obsidian_plugin
    from vaultsync.app.openclaw import Planned
    from vaultsync.app.openclaw import install as install_openclaw_plugin
    from vaultsync.app.recall import Hit, Recaller, RecallOptions, RecallResult, parse_kinds, recall
    from vaultsync.app.recall_dense import EmbedReport, embed_recall, semantic_state
    from vaultsync.app.review import ReviewResult, review
    from vaultsync.app.review import fix as review_fix
    from vaultsync.app.review import regenerate as regenerate_summaries
    from vaultsync.app.review_notes import latest as latest_review_note
    from vaultsync.app.schedule import Status as ScheduleStatus
    from vaultsync.app.schedule import absolute_config, write_log
    from vaultsync.app.schedule import every_checked as check_interval
    from vaultsync.app.schedule import install as install_schedule
    from vaultsync.app.schedule import remove as remove_schedule
    from vaultsync.app.schedule import status as schedule_status
    from vaultsync.app.service import ServiceOutcome, ServiceStatus
    from vaultsync.app.service import install as install_service
    from vaultsync.app.service import remove as remove_service
    from vaultsync.app.service import restart as restart_service
    from vaultsync.app.service import run as run_service
    from vaultsync.app.service import status as service_status
    from vaultsync.app.sync import git_missing, overview, recent_runs, status, summary, sync
    from vaultsync.app.watch import watch
    from vaultsync.app.workspace import MEMORY as MEMORY_FILE
    from vaultsync.app.workspace import DailyNote, MemorySection, daily_note, daily_path, memory_sections, memory_text
    from vaultsync.config import Config
    from vaultsync.errors import (
        Ambiguous,
        ConfigError,
        HistoryError,
        Invalid,
        LockHeld,
        NotARepository,
        NotBuilt,
        NotFound,
        OpenClawRefused,
        PortUnavailable,
        ScheduleError,
        Stale,
        Stopped,
        Superseded,
        UsageError,
        VaultsyncError,
        kind_of,
    )
    from vaultsync.model import Actor, Report
    from vaultsync.options import PassOptions
    from vaultsync.system.faults import refused

# Each public name and where it lives: "module" (the same name there) or "module:name" (named otherwise there).
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
    # the shrink guard's held changes
    "accept": "vaultsync.app.held",
    "restore": "vaultsync.app.held",
    # memory writes
    "remember": "vaultsync.app.memory",
    "supersede": "vaultsync.app.memory",
    "forget": "vaultsync.app.memory",
    "patch": "vaultsync.app.memory",
    "Written": "vaultsync.app.memory",
    "append_daily": "vaultsync.app.capture",
    "Captured": "vaultsync.app.capture",
    "Answers": "vaultsync.app.answers",
    "Answer": "vaultsync.app.answers",
    "fingerprint": "vaultsync.app.answers",
    # memory reads
    "list_entities": "vaultsync.app.entities",
    "count_facts": "vaultsync.app.entities",
    "get_entity": "vaultsync.app.entities",
    "get_fact": "vaultsync.app.entities",
    "Entity": "vaultsync.app.entities",
    "daily_note": "vaultsync.app.workspace",
    "daily_path": "vaultsync.app.workspace",
    "memory_text": "vaultsync.app.workspace",
    "memory_sections": "vaultsync.app.workspace",
    "DailyNote": "vaultsync.app.workspace",
    "MemorySection": "vaultsync.app.workspace",
    "MEMORY_FILE": "vaultsync.app.workspace:MEMORY",
    "Recaller": "vaultsync.app.recall",
    "RecallOptions": "vaultsync.app.recall",
    "RecallResult": "vaultsync.app.recall",
    "Hit": "vaultsync.app.recall",
    "parse_kinds": "vaultsync.app.recall",
    "recall": "vaultsync.app.recall",
    "EmbedReport": "vaultsync.app.recall_dense",
    "embed_recall": "vaultsync.app.recall_dense",
    "semantic_state": "vaultsync.app.recall_dense",
    "history": "vaultsync.app.history",
    "History": "vaultsync.app.history",
    "HistoryChange": "vaultsync.app.history",
    "context": "vaultsync.app.context",
    "Context": "vaultsync.app.context",
    "BUDGET": "vaultsync.app.context",
    # the person's decisions, from a plugin
    "proposed_facts": "vaultsync.app.inbox:proposed",
    "decide_proposed": "vaultsync.app.inbox:decide",
    "open_conflicts": "vaultsync.app.conflicts",
    "resolve_conflict": "vaultsync.app.conflicts:resolve",
    "OpenConflict": "vaultsync.app.conflicts",
    "Resolved": "vaultsync.app.conflicts",
    "latest_review_note": "vaultsync.app.review_notes:latest",
    # the memory's upkeep
    "janitor": "vaultsync.app.janitor",
    "JanitorResult": "vaultsync.app.janitor",
    "review": "vaultsync.app.review",
    "review_fix": "vaultsync.app.review:fix",
    "regenerate_summaries": "vaultsync.app.review:regenerate",
    "ReviewResult": "vaultsync.app.review",
    "extract": "vaultsync.app.extract",
    "ExtractResult": "vaultsync.app.extract",
    # setting up
    "diagnose": "vaultsync.app.doctor",
    "Diagnosis": "vaultsync.app.doctor",
    "Check": "vaultsync.app.doctor",
    "find_setup": "vaultsync.app.discover:find",
    "Found": "vaultsync.app.discover",
    "FoundVault": "vaultsync.app.discover",
    "FoundWorkspace": "vaultsync.app.discover",
    "life_of": "vaultsync.app.discover",
    "init_vault": "vaultsync.app.init",
    "InitResult": "vaultsync.app.init",
    "load_token": "vaultsync.app.init",
    "install_obsidian_plugin": "vaultsync.app.obsidian:install",
    "Installed": "vaultsync.app.obsidian",
    "OBSIDIAN_URL": "vaultsync.app.obsidian:DEFAULT_URL",
    "install_openclaw_plugin": "vaultsync.app.openclaw:install",
    "Planned": "vaultsync.app.openclaw",
    "install_schedule": "vaultsync.app.schedule:install",
    "remove_schedule": "vaultsync.app.schedule:remove",
    "schedule_status": "vaultsync.app.schedule:status",
    "ScheduleStatus": "vaultsync.app.schedule:Status",
    "absolute_config": "vaultsync.app.schedule",
    "check_interval": "vaultsync.app.schedule:every_checked",
    "install_service": "vaultsync.app.service:install",
    "remove_service": "vaultsync.app.service:remove",
    "restart_service": "vaultsync.app.service:restart",
    "run_service": "vaultsync.app.service:run",
    "service_status": "vaultsync.app.service:status",
    "ServiceOutcome": "vaultsync.app.service",
    "ServiceStatus": "vaultsync.app.service",
    "write_log": "vaultsync.app.schedule",
    # errors: one family (kind, field, hint), rendered from one table, all defined in errors.py
    "VaultsyncError": "vaultsync.errors",
    "ConfigError": "vaultsync.errors",
    "LockHeld": "vaultsync.errors",
    "OpenClawRefused": "vaultsync.errors",
    "Stopped": "vaultsync.errors",
    "Stale": "vaultsync.errors",
    "Invalid": "vaultsync.errors",
    "NotFound": "vaultsync.errors",
    "Ambiguous": "vaultsync.errors",
    "Superseded": "vaultsync.errors",
    "UsageError": "vaultsync.errors",
    "HistoryError": "vaultsync.errors",
    "NotBuilt": "vaultsync.errors",
    "NotARepository": "vaultsync.errors",
    "ScheduleError": "vaultsync.errors",
    "PortUnavailable": "vaultsync.errors",
    "kind_of": "vaultsync.errors",
    "refused": "vaultsync.system.faults",  # a full or read-only disk, in one line
}

# Literal, so editors and linters see what is re-exported; tests/test_layers.py keeps it equal to the table.
# fmt: off
__all__ = [
    "BUDGET", "MEMORY_FILE", "OBSIDIAN_URL", "Ambiguous", "Answer", "Answers", "Captured", "Check", "ConfigError",
    "Context", "DailyNote", "Diagnosis", "EmbedReport", "Entity", "ExtractResult", "Found", "FoundVault",
    "FoundWorkspace", "History", "HistoryChange", "HistoryError", "Hit", "InitResult", "Installed", "Invalid",
    "JanitorResult", "LockHeld", "MemorySection", "NotARepository", "NotBuilt", "NotFound", "OpenClawRefused",
    "OpenConflict", "PassOptions", "Planned", "PortUnavailable", "RecallOptions", "RecallResult", "Recaller",
    "Resolved", "ReviewResult", "ScheduleError", "ScheduleStatus", "ServiceOutcome", "ServiceStatus", "Stale",
    "Stopped", "Superseded", "UsageError", "Vault", "VaultsyncError", "Written", "absolute_config", "accept",
    "append_daily", "check_interval", "context", "count_facts", "daily_note", "daily_path", "decide_proposed",
    "diagnose", "embed_recall", "extract", "find_setup", "fingerprint", "forget", "get_entity", "get_fact",
    "git_missing", "history", "init_vault", "install_obsidian_plugin", "install_openclaw_plugin",
    "install_schedule", "install_service", "janitor", "kind_of", "latest_review_note", "life_of", "list_entities",
    "load_token", "memory_sections", "memory_text", "open_conflicts", "overview", "parse_kinds", "patch",
    "proposed_facts", "recall", "recent_runs", "refused", "regenerate_summaries", "remember", "remove_schedule",
    "remove_service", "resolve_conflict", "restart_service", "restore", "review", "review_fix", "run_service",
    "schedule_status", "semantic_state", "service_status", "status", "summary", "supersede", "sync", "watch",
    "write_log",
]
# fmt: on


def __getattr__(name: str) -> Any:
    where = _SURFACE.get(name)
    if where is None:
        raise AttributeError(f"module 'vaultsync.api' has no attribute {name!r}")
    module, _, attr = where.partition(":")
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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

    def accept(self, targets: list[str]) -> Report:
        from vaultsync.app.held import accept

        return accept(self.config, targets)

    def restore(self, path: str, at: str | None = None) -> Report:
        from vaultsync.app.held import restore

        return restore(self.config, path, at)

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

    def entity(self, entity: str) -> Entity:
        from vaultsync.app.entities import get_entity

        return get_entity(self.config, entity)

    def recall(self, query: str, options: RecallOptions | None = None) -> RecallResult:
        from vaultsync.app.recall import RecallOptions, recall

        return recall(self.config, query, options or RecallOptions())

    def history(self, target: str | None = None, **given: Any) -> History:
        from vaultsync.app.history import history

        return history(self.config, target, **given)

    def janitor(self, dry_run: bool = False, today: date | None = None) -> JanitorResult:
        from vaultsync.app.janitor import janitor

        return janitor(self.config, dry_run, today)

    def review(self, today: date | None = None, dry_run: bool = False) -> ReviewResult:
        from vaultsync.app.review import review

        return review(self.config, today, dry_run)

    def fix(self, today: date | None = None, dry_run: bool = False) -> ReviewResult:
        from vaultsync.app.review import fix

        return fix(self.config, today, dry_run)

    def extract(self, dry_run: bool = False, today: date | None = None) -> ExtractResult:
        from vaultsync.app.extract import extract

        return extract(self.config, dry_run, today)
