"""The weekly review use case: find what is inconsistent in the knowledge graph, write it into a review note the
person ticks in Obsidian, apply exactly the ticked fixes, and regenerate summaries from the active facts.

The checks are pure (``core/review.py``), the note's text too (``core/review_note.py``); every write goes through
the one write path (``app/write.py``): fixes as the person's edits of items.json (they ticked them), the review
note and Timeline.md as the agent's, the ticked note marked applied as the person's.
The review note is the person's to tick, so it is written only while it holds no ticked fix not yet applied.
A dry run of any of them takes the same decisions and writes nothing: ``planned`` says what it would write.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from vaultsync.app.edits import edit_facts, write_summary
from vaultsync.app.facts import vault_folders
from vaultsync.config import Config
from vaultsync.core.review import EntityFacts, Finding, review_entity
from vaultsync.core.review_note import (
    ReviewNoteError,
    generated_section,
    keep_typed,
    mark_applied,
    review_note,
    ticked,
    typed_lines,
    week_of,
)
from vaultsync.core.timeline import TIMELINE, timeline
from vaultsync.errors import FileChanged, MemoryEditError, Stopped
from vaultsync.memory.identity import AmbiguousEntity, UnknownEntity, resolve_entity
from vaultsync.memory.tree import MemEntity, scan_memory
from vaultsync.model import AGENT, PERSON, ExitCode, Problem, Severity
from vaultsync.system.fs import atomic_write, read_or_none
from vaultsync.system.program import ProgramFailed, run_program
from vaultsync.text.markers import dropped
from vaultsync.vault.layout import VaultLayout, slug_of
from vaultsync.write_path.write import OwnWrites, WriteRequest, write

__all__ = ["ReviewResult", "fix", "regenerate", "review"]


@dataclass
class ReviewResult:
    findings: list[Finding] = field(default_factory=list)
    note: str = ""  # vault-relative path of the review note written or read
    applied: list[str] = field(default_factory=list)  # what --fix or --regenerate did, one line each
    diffs: list[str] = field(default_factory=list)  # --regenerate --dry-run: what would change
    planned: list[str] = field(default_factory=list)  # a dry run: each write it would make, one line each
    dry_run: bool = False
    problems: list[Problem] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> ExitCode:
        if any(p.severity is Severity.ERROR for p in self.problems):
            return ExitCode.SKIPPED_INPUT
        return ExitCode.CONFLICTS if self.findings else ExitCode.CLEAN

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "exit_code": int(self.exit_code),
            "note": self.note or None,
            "findings": [f.to_json() for f in self.findings],
            "applied": self.applied,
            "diffs": self.diffs,
            "planned": self.planned,
            "problems": [{"path": p.path, "message": p.message, "severity": str(p.severity)} for p in self.problems],
            "commits": self.commits,
        }


def review(cfg: Config, today: date | None = None, dry_run: bool = False) -> ReviewResult:
    """Check every entity and write this week's review note (unless a ticked fix in it still waits)."""
    today = today or date.today()
    result = ReviewResult(dry_run=dry_run)
    entities = _scan(cfg, result)
    known = {str(f.get("id")) for e in entities.values() for _, f in e.facts if isinstance(f, dict) and "id" in f}
    for rel in sorted(entities):
        entity = entities[rel]
        day = _mtime_day(entity.folder / "summary.md") if entity.summary else None
        facts = [f for _, f in entity.facts]
        summary = entity.summary.content.body if entity.summary else None
        found = review_entity(EntityFacts(rel, facts, summary, day, known), today, cfg.review.single_valued)
        result.findings += found
    result.note = f"{cfg.review.folder}/{week_of(today)}.md"
    _write_notes(cfg, result, entities)
    return result


def _scan(cfg: Config, result: ReviewResult) -> dict[str, MemEntity]:
    scan = scan_memory(cfg.workspace, cfg.life, VaultLayout(cfg.layout).reserved_life_dirs())
    result.problems += [p for p in scan.problems if p.severity is Severity.ERROR]
    return scan.entities


def _mtime_day(path: Path) -> date | None:
    try:
        return date.fromtimestamp(path.stat().st_mtime)
    except OSError:
        return None


def _write_notes(cfg: Config, result: ReviewResult, entities: dict[str, MemEntity]) -> None:
    """The review note and Timeline.md, written under the lock and committed as the agent in one commit; on a dry
    run only named in ``planned``, which needs neither the lock nor git."""
    layout = VaultLayout(cfg.layout)

    def link(rel: str, fid: str) -> str:
        return f"[[{layout.fact_note(rel, fid).removesuffix('.md')}|{fid}]]"

    def entity_link(rel: str) -> str:
        return f"[[{layout.entity_note(rel).removesuffix('.md')}|{slug_of(rel)}]]"

    title = result.note.rsplit("/", 1)[-1].removesuffix(".md")
    note = review_note(title, result.findings, link, entity_link)
    facts = ((rel, f) for rel in sorted(entities) for _, f in entities[rel].facts if isinstance(f, dict))

    def apply() -> OwnWrites:
        written = []
        if _write_review_note(cfg, result, note):
            written.append(result.note)
        # An unreadable items.json would drop its facts from the timeline: keep the last one until it is fixed.
        whole = not any(e.broken for e in entities.values())
        if whole and _replace(cfg.vault / TIMELINE, timeline(facts, link, entity_link).encode(), result):
            written.append(TIMELINE)
        what = [f"{result.note} ({len(result.findings)} finding(s))"] if result.note in written else []
        what += ["Timeline.md regenerated"] if TIMELINE in written else []
        return OwnWrites(bool(written), commit=tuple(written), subject=f"review: {', '.join(what)}")

    if result.dry_run:
        found = f" ({len(result.findings)} finding(s))"
        result.planned += [f"write {path}{found if path == result.note else ''}" for path in apply().commit]
        return
    _commit(cfg, WriteRequest("review", AGENT, apply=apply, run_pass=False), result)


def _write_review_note(cfg: Config, result: ReviewResult, text: str) -> bool:
    """This week's note, rewritten with the new findings; what the person typed into it stays (``keep_typed``)."""
    path = cfg.vault / result.note
    old = read_or_none(path)
    if old is not None:
        try:
            typed = old.decode("utf-8")
            waiting: list[Any] = ticked(typed)
        except UnicodeDecodeError:
            result.problems.append(Problem(str(path), "is not UTF-8 text; note left as it is", Severity.WARNING))
            return False
        except ReviewNoteError:
            waiting = [None]
        if waiting:
            message = "holds ticked fixes not applied yet; run `vaultsync review --fix` first; note left as it is"
            result.problems.append(Problem(str(path), message, Severity.WARNING))
            return False
        kept = len(typed_lines(typed))
        text = keep_typed(typed, text)
        if kept and text.encode() != old:
            said = ("would be rewritten", "would be kept") if result.dry_run else ("rewritten", "were kept")
            message = f"{said[0]} with this review's findings; the {kept} line(s) you typed {said[1]}"
            result.problems.append(Problem(str(path), message, Severity.NOTE))
    return _replace(path, text.encode(), result)


def _replace(path: Path, data: bytes, result: ReviewResult) -> bool:
    """Write ``data`` unless the file already holds it (so an unchanged review writes nothing); False if not.
    A dry run writes nothing and answers whether it would have."""
    old = read_or_none(path)
    if old == data:
        return False
    if result.dry_run:
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        atomic_write(path, data, old)
    except FileChanged:
        result.problems.append(Problem(str(path), "changed while being written; left as it is", Severity.WARNING))
        return False
    return True


def _commit(cfg: Config, change: WriteRequest, result: ReviewResult) -> None:
    """The review note is outside what a pass carries: its change commits the files it wrote, as its actor."""
    try:
        report = write(cfg, change)
    except Stopped as exc:
        result.problems.append(Problem(str(cfg.vault), f"{exc}; nothing written"))
        return
    result.commits += report.commits
    result.problems += [Problem(p.path, f"could not commit: {p.message}", Severity.WARNING) for p in report.problems]


def fix(cfg: Config, today: date | None = None, dry_run: bool = False) -> ReviewResult:
    """Apply exactly the ticked fixes of every review note, then mark each task applied in its note; a dry run
    says which it would apply (and the summaries it would regenerate, as diffs) and writes nothing."""
    today = today or date.today()
    result = ReviewResult(dry_run=dry_run)
    folder = cfg.vault / cfg.review.folder
    notes = sorted(folder.glob("*.md")) if folder.is_dir() else []
    plans = []
    for note in notes:
        raw = note.read_bytes()
        try:
            tasks = ticked(raw.decode("utf-8"))
        except (UnicodeDecodeError, ReviewNoteError) as exc:
            # One note that cannot be read as written waits for its fix; the other notes' fixes go on.
            result.problems.append(Problem(str(note), f"{exc}; no fix of this note applied"))
            continue
        if tasks:
            plans.append((note, raw, tasks))
    entities = _scan(cfg, result) if plans else {}
    edits: dict[str, dict[str, dict[str, Any]]] = {}
    regen: list[str] = []
    said: list[str] = []
    usable = []
    for note, raw, tasks in plans:
        found = _note_fixes(note, tasks, entities, result)
        if found is None:
            continue
        usable.append((note, raw, tasks))
        for rel, changes in found[0].items():
            edits.setdefault(rel, {}).update(changes)
        regen += found[1]
        said += found[2]
    plans = usable
    if dry_run:
        result.planned += [f"apply {line}" for line in said]
        result.planned += [f"mark the applied fixes in {n.relative_to(cfg.vault).as_posix()}" for n, _, _ in plans]
        for rel in dict.fromkeys(regen):
            _regenerate_one(cfg, entities[rel], today, True, result)
        return result
    result.applied += said
    try:
        if edits:
            subject = f"review: {'; '.join(result.applied)}"
            done = edit_facts(cfg, edits, subject if len(subject) <= 100 else "review: ticked fixes applied", today)
            result.commits += done.sync.commits if done.sync else []
        for rel in dict.fromkeys(regen):
            result.commits += _regenerate_one(cfg, entities[rel], today, False, result)
    except MemoryEditError as exc:
        result.problems.append(Problem(str(cfg.life), str(exc)))
        return result
    _mark(cfg, plans, today, result)
    return result


def _note_fixes(
    note: Path, tasks: list[Any], entities: dict[str, MemEntity], result: ReviewResult
) -> tuple[dict[str, dict[str, dict[str, Any]]], list[str], list[str]] | None:
    """The edits, regenerations and lines to say for one note's ticked fixes; None (reported) when one of them
    no longer applies, and then none of that note's is applied."""
    edits: dict[str, dict[str, dict[str, Any]]] = {}
    regen: list[str] = []
    said: list[str] = []
    for task in tasks:
        entity = entities.get(task.entity)
        if entity is None:
            result.problems.append(Problem(str(note), f"line {task.line + 1}: no entity {task.entity}; no fix applied"))
            return None
        if task.fix.action == "regenerate":
            regen.append(task.entity)
            continue
        old, by = task.fix.ids[0], task.fix.by
        ids = {str(f.get("id")): f for _, f in entity.facts if isinstance(f, dict)}
        if old not in ids or by not in ids:
            message = f"line {task.line + 1}: {task.entity} has no fact {old if old not in ids else by}"
            result.problems.append(Problem(str(note), message + "; no fix of this note applied"))
            return None
        key = "superseded_by" if "superseded_by" in ids[old] else "supersededBy"
        edits.setdefault(task.entity, {})[old] = {"status": "superseded", key: by}
        said.append(f"{task.entity}: {old} superseded by {by}")
    return edits, regen, said


def _mark(cfg: Config, plans: list[Any], today: date, result: ReviewResult) -> None:
    """Mark each applied task in its note; the note holds the person's ticks, so it is committed as the person."""

    def apply() -> OwnWrites:
        written = []
        for note, raw, tasks in plans:
            text = raw.decode("utf-8")
            try:
                atomic_write(note, mark_applied(text, [t.line for t in tasks], today).encode(), raw)
            except FileChanged:
                message = "changed meanwhile; applied fixes not marked"
                result.problems.append(Problem(str(note), message, Severity.WARNING))
                continue
            written.append(note.relative_to(cfg.vault).as_posix())
        return OwnWrites(bool(written), commit=tuple(written), subject="review: marked the applied fixes")

    _commit(cfg, WriteRequest("review", PERSON, apply=apply, run_pass=False), result)


def regenerate(cfg: Config, rels: list[str] | None, today: date | None = None, dry_run: bool = False) -> ReviewResult:
    """Rewrite the generated section of summary.md (or, with ``[review] command``, the whole summary) of the
    entities ``rels`` (None: every entity)."""
    today = today or date.today()
    result = ReviewResult(dry_run=dry_run)
    entities = _scan(cfg, result)
    for name in rels if rels is not None else sorted(entities):
        try:
            rel = resolve_entity(name, entities, vault_folders(cfg))
        except (UnknownEntity, AmbiguousEntity) as exc:
            result.problems.append(Problem(str(cfg.life / name), str(exc)))
            continue
        try:
            result.commits += _regenerate_one(cfg, entities[rel], today, dry_run, result)
        except MemoryEditError as exc:
            result.problems.append(Problem(str(cfg.life / rel), str(exc)))
    return result


def _regenerate_one(cfg: Config, entity: MemEntity, today: date, dry_run: bool, result: ReviewResult) -> list[str]:
    old_raw = entity.summary.raw if entity.summary else None
    old = old_raw.decode("utf-8") if old_raw is not None else f"# {slug_of(entity.rel)}\n"
    facts = [f for _, f in entity.facts if isinstance(f, dict)]
    if cfg.review.command:
        new = _external(cfg, entity.rel, old, facts, result)
        if new is None:
            return []
    else:
        new = generated_section(old, facts, "\r\n" if "\r\n" in old else "\n")
    if new == (old if old_raw is not None else None):
        return []
    if dry_run:
        diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{entity.rel}/summary.md", "b/...")
        result.diffs.append("".join(diff))
        return []
    result.applied.append(f"{entity.rel}: summary regenerated")
    done = write_summary(cfg, entity.rel, new, old_raw, f"review: regenerated the summary of {entity.rel}", today)
    return done.sync.commits if done.sync else []


def _external(cfg: Config, rel: str, summary: str, facts: list[Any], result: ReviewResult) -> str | None:
    """The summary an external program writes from JSON on stdin; None (reported) when it fails or says nothing."""
    payload = json.dumps({"entity": rel, "summary": summary, "facts": facts}, ensure_ascii=False)
    try:
        done = run_program(cfg.review.command, payload, timeout=300)
    except ProgramFailed as exc:
        result.problems.append(Problem(cfg.review.command, f"{exc}; {rel} unchanged", Severity.WARNING))
        return None
    if done.returncode != 0 or not done.stdout.strip():
        why = f"exit {done.returncode}" if done.returncode else "an empty answer"
        result.problems.append(Problem(cfg.review.command, f"{why}; {rel} unchanged", Severity.WARNING))
        return None
    new = done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"
    lost = dropped(summary, new)
    if lost:
        # OpenClaw reads these back (memory-wiki's human notes, dreaming's blocks, a promoted entry's lineage):
        # a summariser that rewrote the prose around them must not take them away.
        first = lost[0].splitlines()[0].strip()
        result.problems.append(
            Problem(
                cfg.review.command,
                f"its summary drops {len(lost)} of OpenClaw's marked lines or blocks (the first: {first}); keep "
                f"them as they are; {rel} unchanged",
                Severity.WARNING,
            )
        )
        return None
    return new
