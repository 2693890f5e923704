"""The extraction use case: hand the daily-note text added since the last run, and the list of entities, to an
external program (``[extract] command``, e.g. a small model's wrapper) and file what it proposes into the inbox.

Nothing a model says becomes memory unreviewed: every proposal is written with ``"status": "proposed"``, which
the vault shows in the Inbox view until the person accepts or rejects it. The program runs without the lock (it
may take minutes and a pass should not wait for it); its answer is checked whole (``core/extract.py``) before
anything is written, and written through the memory write path (lock, compare-and-swap edit of items.json in
its own style, ids minted as ``remember`` mints them, then one pass). Where each note stopped is recorded in the
same locked write, after the facts (``state/extracted.py``); a refused answer leaves it where it was.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from vaultsync.app.edits import NewFact, add_facts
from vaultsync.app.facts import entity_dir
from vaultsync.config import Config
from vaultsync.core.extract import AnswerError, Proposal, read_answer
from vaultsync.errors import Invalid, MemoryEditError
from vaultsync.memory.tree import list_memory, parse_summary
from vaultsync.model import ExitCode, Problem, Report, Severity
from vaultsync.names import daily_date
from vaultsync.state.extracted import Mark, NewText, dump_marks, new_text, read_marks
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import read_or_none
from vaultsync.system.program import ProgramFailed, run_program
from vaultsync.text.decoding import NotText
from vaultsync.vault.layout import VaultLayout, slug_of

__all__ = ["ExtractResult", "extract"]

TIMEOUT = 600  # seconds the program may take: a local model on a small machine is slow, not stuck


@dataclass
class ExtractResult:
    dry_run: bool
    configured: bool = True
    notes: list[str] = field(default_factory=list)  # the daily notes whose new text was handed over
    proposals: list[Proposal] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # each proposal's fact id, in order (also in a dry run)
    rejected: str = ""  # why the answer was refused ("" when it was taken)
    problems: list[Problem] = field(default_factory=list)
    sync: Report | None = None

    @property
    def exit_code(self) -> ExitCode:
        if not self.configured:
            return ExitCode.USAGE
        if self.rejected or any(p.severity is Severity.ERROR for p in self.problems):
            return ExitCode.SKIPPED_INPUT
        if self.sync is not None and self.sync.exit_code is not ExitCode.CLEAN:
            return self.sync.exit_code
        return ExitCode.CLEAN

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "exit_code": int(self.exit_code),
            "notes": self.notes,
            "proposed": [p.to_json() | {"id": i} for p, i in zip(self.proposals, self.ids, strict=False)],
            "rejected": self.rejected or None,
            "problems": [{"path": p.path, "message": p.message, "severity": str(p.severity)} for p in self.problems],
            "sync": self.sync.to_json() if self.sync is not None else None,
        }


def extract(cfg: Config, dry_run: bool = False, today: date | None = None) -> ExtractResult:
    """Run the program over the new daily-note text and file its proposals; see the module's docstring.

    Raises ``LockHeld`` when a pass holds the lock while the proposals are written."""
    result = ExtractResult(dry_run, configured=bool(cfg.extract.command.strip()))
    if not result.configured:
        return result
    state = StateFiles(cfg.state_dir).extracted
    old = read_or_none(state)
    marks = read_marks(old)
    chunks = _new_texts(cfg, marks)
    result.notes = [c.note for c in chunks]
    if not chunks:
        return result
    reserved = VaultLayout(cfg.layout).reserved_life_dirs()
    entities = _entities(cfg, reserved)
    payload = {
        "notes": [{"note": c.note, "first_line": c.first_line, "text": c.text} for c in chunks],
        "entities": entities,
    }
    answer = _run(cfg.extract.command, payload, result)
    if answer is None:
        return result
    spans = {c.note: (c.first_line, c.first_line + c.text.count("\n") - 1) for c in chunks}
    try:
        result.proposals = read_answer(answer, spans, {e["entity"] for e in entities}, reserved)
        for p in result.proposals:
            entity_dir(cfg, p.entity)  # refuses a folder reached through a symbolic link
    except (AnswerError, Invalid) as exc:
        result.proposals = []
        result.rejected = f"{cfg.extract.command}: answer rejected: {exc}; nothing changed"
        return result
    facts: dict[str, list[NewFact]] = {}
    for p in result.proposals:
        fields = {"category": p.category, "source": p.source, "status": "proposed"}
        facts.setdefault(p.entity, []).append((p.fact, fields, daily_date(p.note.rsplit("/", 1)[-1]) or today))
    marks.update({c.note: c.mark for c in chunks})
    n, sources = len(result.proposals), sorted({p.note for p in result.proposals})
    subject = f"extract: {n} fact{'' if n == 1 else 's'} proposed from {', '.join(sources)}"
    if len(subject) > 100:
        subject = f"extract: {n} facts proposed from {len(sources)} daily notes"
    try:
        done = add_facts(cfg, facts, subject, today, dry_run, (state, old, dump_marks(marks)))
    except MemoryEditError as exc:
        result.problems.append(Problem(str(cfg.life), str(exc)))
        return result
    by_entity: dict[str, list[str]] = {}
    for rel, record in done.added:
        by_entity.setdefault(rel, []).append(str(record.get("id")))
    minted = {rel: iter(ids) for rel, ids in by_entity.items()}
    result.ids = [next(minted[p.entity]) for p in result.proposals]
    result.sync = done.sync
    return result


def _new_texts(cfg: Config, marks: dict[str, Mark]) -> list[NewText]:
    """The new whole lines of every daily note ``memory/YYYY-MM-DD.md``, oldest note first."""
    folder = cfg.workspace / "memory"
    found = []
    names = sorted(p.name for p in folder.iterdir() if daily_date(p.name) and p.is_file()) if folder.is_dir() else []
    for name in names:
        path = folder / name
        raw = read_or_none(path) if not path.is_symlink() else None
        chunk = new_text(f"memory/{name}", raw, marks.get(f"memory/{name}")) if raw is not None else None
        if chunk is not None:
            found.append(chunk)
    return found


def _entities(cfg: Config, reserved: frozenset[str]) -> list[dict[str, Any]]:
    """Each entity's folder, name (its summary's first ``# `` heading, else its folder's name) and aliases."""
    listing = list_memory(cfg.workspace, cfg.life, reserved)
    out = []
    for rel in sorted(listing.rels):
        name, aliases = slug_of(rel), []
        raw = read_or_none(cfg.life / rel / "summary.md")
        if raw is not None:
            try:
                content = parse_summary(raw).content
            except NotText:
                content = None
            if content is not None:
                heading = next((ln[2:].strip() for ln in content.body.splitlines() if ln.startswith("# ")), "")
                name = heading or name
                listed = content.props.get("aliases")
                aliases = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
        out.append({"entity": rel, "name": name, "aliases": aliases})
    return out


def _run(command: str, payload: dict[str, Any], result: ExtractResult) -> str | None:
    """The program's standard output; None (and the answer counted as rejected) when it could not answer."""
    try:
        done = run_program(command, json.dumps(payload, ensure_ascii=False), TIMEOUT)
    except ProgramFailed as exc:
        result.rejected = f"{command}: {exc}; nothing changed"
        return None
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or ["no message"]
        result.rejected = f"{command}: exited {done.returncode} ({said[0]}); nothing changed"
        return None
    return done.stdout
