"""The janitor use case: move expired MEMORY.md sections and old daily notes into ``memory/archive/``, then run a
pass so the vault and git follow in the same command.

The moves go through the one write path (``app/write.py``): under the run lock, so no pass reads MEMORY.md
half-archived, and the pass that follows under the same lock obeys every guard a ``sync`` obeys (a synced vault
folder gone missing stops it, exit 4) and commits the result as the agent, its subject naming the janitor and
the sections. Nothing is
deleted: the archive is written (and re-read) before MEMORY.md loses a line, and a MEMORY.md that changed
since it was read is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from vaultsync.config import Config
from vaultsync.errors import FileChanged, Stopped
from vaultsync.keys import file_key
from vaultsync.memory.archive import (
    ARCHIVE_DIR,
    DAILY_ARCHIVE_DIR,
    append_sections,
    archive_name,
    merge_daily,
    without_sections,
)
from vaultsync.memory.sections import Section, SectionsError, due, expired, holds_p0, parse_sections, split_lines
from vaultsync.memory.sizes import BOOTSTRAP_FILES, size_problems
from vaultsync.model import AGENT, ExitCode, Problem, Report, Severity
from vaultsync.names import day_note_date
from vaultsync.options import PassOptions
from vaultsync.system.fs import atomic_write, read_or_none, remove_checked, settle
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["ArchivedSection", "JanitorResult", "janitor"]


@dataclass(frozen=True)
class ArchivedSection:
    title: str
    priority: int
    tagged_on: str
    lines: tuple[int, int]  # 1-based, inclusive, as MEMORY.md numbered them before the run
    archive: str  # workspace-relative path of the archive file


@dataclass
class JanitorResult:
    dry_run: bool
    sections: list[ArchivedSection] = field(default_factory=list)
    daily: list[tuple[str, str]] = field(default_factory=list)  # (from, to), workspace-relative
    problems: list[Problem] = field(default_factory=list)
    sync: Report | None = None  # the pass that followed, when anything moved

    @property
    def exit_code(self) -> ExitCode:
        if self.sync is not None and self.sync.exit_code is not ExitCode.CLEAN:
            return self.sync.exit_code
        if any(p.severity is Severity.ERROR for p in self.problems):
            return ExitCode.SKIPPED_INPUT
        return ExitCode.CLEAN

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "exit_code": int(self.exit_code),
            "sections": [
                {"title": s.title, "priority": f"P{s.priority}", "date": s.tagged_on, "lines": list(s.lines)}
                | {"archive": s.archive}
                for s in self.sections
            ],
            "daily_notes": [{"from": a, "to": b} for a, b in self.daily],
            "problems": [{"path": p.path, "message": p.message, "severity": str(p.severity)} for p in self.problems],
            "sync": self.sync.to_json() if self.sync is not None else None,
        }


def janitor(cfg: Config, dry_run: bool = False, today: date | None = None) -> JanitorResult:
    """Archive what is due, say what is too big, then (when anything moved) run a pass that commits it.

    Raises ``LockHeld`` when a pass holds the lock.
    """
    today = today or date.today()
    result = JanitorResult(dry_run)
    if not cfg.workspace.is_dir() or not cfg.vault.is_dir():
        result.problems.append(Problem(str(cfg.workspace), "the workspace or the vault folder is missing"))
        return result

    def apply() -> OwnWrites:
        _sections(cfg, today, result)
        _daily_notes(cfg, today, result)
        for name in BOOTSTRAP_FILES:
            raw = read_or_none(cfg.workspace / name)
            if raw is not None:
                result.problems += size_problems(cfg.workspace / name, raw, cfg.janitor)
        # The daily notes it moved and the MEMORY.md it cut are changes it means: the shrink guard never holds
        # them, while every other guard of a pass (a missing folder, an emptied side) stands, as for any sync.
        meant = frozenset(file_key(f"workspace/{rel}") for rel, _ in result.daily)
        if result.sections:
            meant |= {file_key("workspace/MEMORY.md")}
        return OwnWrites(bool(result.sections or result.daily), subject=_subject(result), deleting=meant)

    if dry_run:
        apply()
        return _relative(cfg, result)
    try:
        result.sync = write(cfg, WriteRequest("janitor", AGENT, PassOptions(today=today), apply))
    except Stopped as exc:
        result.problems.append(Problem(str(cfg.life), f"{exc}; nothing archived"))
        return _relative(cfg, result)
    if not (result.sections or result.daily):
        result.sync = None
        return _relative(cfg, result)
    said = {(p.path, p.message) for p in result.problems}
    result.problems += [p for p in result.sync.problems if (p.path, p.message) not in said]
    return _relative(cfg, result)


def _relative(cfg: Config, result: JanitorResult) -> JanitorResult:
    """The problems' files named as the archive lines name them, from the workspace (``MEMORY.md``,
    ``memory/archive/...``), and each said once: the pass reports the size warnings the janitor made too."""
    seen: set[tuple[str, str]] = set()
    shown = []
    for problem in result.problems:
        path = Path(problem.path)
        rel = path.relative_to(cfg.workspace).as_posix() if path.is_relative_to(cfg.workspace) else problem.path
        if (rel, problem.message) not in seen:
            seen.add((rel, problem.message))
            shown.append(replace(problem, path=rel))
    result.problems = shown
    return result


def _subject(result: JanitorResult) -> str:
    """``janitor: archived 2 sections from MEMORY.md (P2 Espresso, P1 X Timeline Scraping)``, and the notes."""
    parts = []
    if result.sections:
        n = len(result.sections)
        titles = ", ".join(f"P{s.priority} {s.title}" for s in result.sections)
        parts.append(f"archived {n} section{'s' if n > 1 else ''} from MEMORY.md ({titles})")
    if result.daily:
        n = len(result.daily)
        parts.append(f"archived {n} daily note{'s' if n > 1 else ''}")
    return "janitor: " + "; ".join(parts)


def _sections(cfg: Config, today: date, result: JanitorResult) -> None:
    path = cfg.workspace / "MEMORY.md"
    raw = read_or_none(path)
    if raw is None:
        return
    try:
        sections = parse_sections(raw)
    except SectionsError as exc:
        result.problems.append(Problem(str(path), f"{exc}; nothing archived"))
        return
    j = cfg.janitor
    for section in sections:
        where = f"line {section.start + 1}: "
        if section.date_problem:
            message = f"{where}section {section.title!r}: {section.date_problem}; not archived"
            result.problems.append(Problem(str(path), message, Severity.WARNING))
        elif due(section, today, j.p1_days, j.p2_days) and holds_p0(sections, section):
            message = f"{where}section {section.title!r} is due but holds a [P0] section; not archived"
            result.problems.append(Problem(str(path), message, Severity.WARNING))
    moved = expired(sections, today, j.p1_days, j.p2_days)
    if not moved:
        return
    rel = f"{ARCHIVE_DIR}/{archive_name(today)}"
    result.sections = [_archived(s, rel) for s in moved]
    if result.dry_run:
        return
    lines = split_lines(raw)
    target = cfg.workspace / rel
    before = read_or_none(target)
    earlier = read_or_none(cfg.workspace / ARCHIVE_DIR / archive_name(today.replace(day=1) - timedelta(days=1)))
    after = append_sections(before, lines, moved, today, j.p1_days, j.p2_days, earlier)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if after != (before or b""):
            atomic_write(target, after, before)
    except FileChanged:
        result.sections = []
        result.problems.append(Problem(str(target), "changed while the janitor wrote it; nothing archived"))
        return
    try:
        atomic_write(path, without_sections(lines, moved), raw)
    except FileChanged:
        # The agent wrote MEMORY.md meanwhile: it keeps every section, so take back what the archive gained.
        if before is not None and after != before:
            atomic_write(target, before, after)
        elif after:
            remove_checked(target, after)
        result.sections = []
        result.problems.append(Problem(str(path), "changed while the janitor read it; nothing archived, run again"))


def _archived(section: Section, archive: str) -> ArchivedSection:
    when = section.tagged_on.isoformat() if section.tagged_on else ""
    return ArchivedSection(section.title, section.priority or 0, when, (section.start + 1, section.end), archive)


def _daily_notes(cfg: Config, today: date, result: JanitorResult) -> None:
    """Move daily notes older than ``keep_daily_days`` to ``memory/archive/daily/``, keeping their names; a day's
    session notes (``2026-11-02-1430.md``) go with it, as they are shown with it."""
    keep = cfg.janitor.keep_daily_days
    folder = cfg.workspace / "memory"
    if not keep or not folder.is_dir():
        return
    oldest = today - timedelta(days=keep)
    for path in sorted(folder.iterdir()):
        day = day_note_date(path.name) if path.suffix == ".md" else None
        if day is None or day >= oldest or path.is_symlink() or not path.is_file():
            continue
        rel, to_rel = f"memory/{path.name}", f"{DAILY_ARCHIVE_DIR}/{path.name}"
        if not result.dry_run and not _move(path, cfg.workspace / to_rel, today, result):
            continue
        result.daily.append((rel, to_rel))


def _move(source: Path, target: Path, today: date, result: JanitorResult) -> bool:
    """Copy, then delete the original only if it still holds what was copied; False (reported) when not moved.

    An archive already holding another version of the note (it came back with a person's late edit) gets the
    two merged (``merge_daily``), once, and says so."""
    raw = source.read_bytes()
    existing = read_or_none(target)
    merged = raw if existing is None else merge_daily(existing, raw, today)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if merged != existing:
            atomic_write(target, merged, existing)
        replaced = remove_checked(source, raw)
        if replaced:
            settle(replaced)
    except FileChanged:
        result.problems.append(Problem(str(source), "changed while the janitor moved it; kept where it was"))
        return False
    if existing is not None and merged not in (existing, raw):
        message = f"already held another version of {source.name}; the lines only the later one has were added"
        result.problems.append(Problem(str(target), message, Severity.WARNING))
    elif existing is not None and merged != existing:
        result.problems.append(Problem(str(target), f"took the later version of {source.name}", Severity.NOTE))
    return True
