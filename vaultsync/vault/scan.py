"""Reading the vault: which notes are entities, facts and mirrored files, and which are not vaultsync's.

Reading never writes. A note that cannot be read is reported and its unit is left alone on both sides.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.model import Problem, Severity
from vaultsync.names import daily_date, day_note_date, name_problem
from vaultsync.system.fs import BEING_WRITTEN, BeingWritten, is_leftover, read_whole
from vaultsync.text.decoding import NotText, decode
from vaultsync.vault.layout import CONFLICT_MARK, FACTS_DIR, VaultLayout, slug_of
from vaultsync.vault.notes import VIEW_MARKER, NoteError, facts_view, read_entity_note, read_fact_note

# Copies other tools leave behind; never read as facts or entities.
FOREIGN_COPY = re.compile(r"(\.sync-conflict-|\(conflicted copy|\(conflict\)|\.orig$|~$|\.bak$|\.tmp$)", re.IGNORECASE)

EMPTY_NOTE = "is empty; left as it is until it has content (to delete what it stood for, delete the note)"


@dataclass
class Note:
    path: str  # vault-relative, "/"-separated
    raw: bytes
    props: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    broken: bool = False  # unreadable: its unit is skipped this pass
    empty: bool = False  # no bytes: a note just created or caught mid-save, unless the file was synced empty


@dataclass
class VaultEntity:
    rel: str
    note: Note | None
    facts: dict[str, Note] = field(default_factory=dict)  # note stem -> note


@dataclass
class VaultScan:
    entities: dict[str, VaultEntity] = field(default_factory=dict)
    files: dict[str, Note] = field(default_factory=dict)  # memory path -> a note that may mirror that file
    conflict_copies: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)  # temp files of a killed pass


@dataclass
class VaultListing:
    """The entities and notes a scan would read, found the same way (``list_vault``), for reading them a batch
    at a time; with what the walk itself finds: copies, notes that are not vaultsync's, folder problems."""

    rels: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # memory paths of the notes that may mirror a memory file
    conflict_copies: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)


class _Scanner:
    def __init__(self, root: Path, layout: VaultLayout, listing: bool = False) -> None:
        self.root = root
        self.layout = layout
        self.listing = listing  # find entities and notes with the same checks, but read none of them
        self.scan = VaultScan()
        self.found: list[str] = []  # listing: entity rels

    def entries(self, rel_dir: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(self.root / rel_dir) as it:
                entries = list(it)
            self.scan.leftovers += [Path(e.path) for e in entries if is_leftover(e.name)]
            return sorted((e for e in entries if not e.name.startswith(".")), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.scan.problems.append(Problem(rel_dir, f"cannot read folder: {exc.strerror}"))
            return []

    def read(self, rel_path: str, kind: str) -> Note | None:
        try:
            raw = read_whole(self.root / rel_path)
        except BeingWritten:
            self.scan.problems.append(Problem(rel_path, BEING_WRITTEN, Severity.WARNING))
            return Note(rel_path, b"", broken=True)
        except OSError as exc:
            self.scan.problems.append(Problem(rel_path, f"cannot read: {exc.strerror}"))
            return None
        note = Note(rel_path, raw)
        if not raw:
            # A note Obsidian has just created, or one caught between the truncate and the write of a save. A
            # mirrored file may also have been synced empty (an agent clears HEARTBEAT.md): only the base can
            # tell, so for those the pairing with the base decides (``core/units.py``).
            note.broken = note.empty = True
            if kind != "file":
                self.scan.problems.append(Problem(rel_path, EMPTY_NOTE, Severity.WARNING, standing=True))
            return note
        try:
            text = decode(raw)
            if kind == "fact":
                note.props, note.body = read_fact_note(text)
            elif kind == "entity":
                note.props, note.body = read_entity_note(text)
            else:
                note.body = text
        except (NotText, NoteError) as exc:
            note.broken = True
            self.scan.problems.append(Problem(rel_path, f"{exc}; left untouched on both sides", standing=True))
        return note

    def skip_copy(self, rel_path: str) -> bool:
        name = rel_path.rsplit("/", 1)[-1]
        if CONFLICT_MARK in name:
            self.scan.conflict_copies.append(rel_path)
            return True
        if FOREIGN_COPY.search(name.removesuffix(".md")):
            self.scan.foreign.append(rel_path)
            return True
        return False

    def walk_para(self, rel_dir: str) -> None:
        entries = self.entries(rel_dir)
        reserved = self.layout.reserved_dirs()
        name = rel_dir.rsplit("/", 1)[-1]
        entity_rel = self.layout.entity_rel_of_dir(rel_dir)
        files = {e.name for e in entries if e.is_file(follow_symlinks=False)}
        dirs = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
        notes = self.entity_notes(rel_dir, entity_rel, name, files, FACTS_DIR in dirs) if entity_rel is not None else []
        is_entity = entity_rel is not None and (bool(notes) or FACTS_DIR in dirs)
        if is_entity:
            assert entity_rel is not None
            self.read_entity(rel_dir, entity_rel, notes, FACTS_DIR in dirs)
        for entry in entries:
            child = f"{rel_dir}/{entry.name}"
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if child in reserved:
                    self.walk_mirror(child)
                elif not (is_entity and entry.name == FACTS_DIR):
                    self.walk_para(child)
            elif entry.name.endswith(".md") and not (is_entity and entry.name in notes):
                self.candidate(child)

    def entity_notes(self, rel_dir: str, rel: str, name: str, files: Iterable[str], has_facts: bool) -> list[str]:
        """The entity note's file name; without one named after the folder, the notes that are its note renamed.

        A person renaming ``sarah-chen.md`` to ``Sarah Chen.md`` in Obsidian leaves the folder without its note:
        read that way, the summary would be deleted and the renamed note taken for the person's own, whose edits
        never sync. A note holding the live view of exactly this folder's facts is the entity note under another
        name (the pass names it back). Renaming the folder instead keeps the note's name and its view of the old
        folder, which Obsidian does not rewrite: a note holding the view of the folder it is named after is that
        folder's entity note moved here; failing both, the one note holding the properties vaultsync renders for
        an entity (``facts_active``) in a folder with facts. Only a folder missing its note is searched, so this
        costs nothing usually.
        """
        if f"{name}.md" in files:
            return [f"{name}.md"]
        views = [facts_view(self.layout.facts_dir(rel), text).encode() for text in (False, True)]
        found, rendered = [], []
        for other in sorted(files):
            path = f"{rel_dir}/{other}"
            if not other.endswith(".md") or CONFLICT_MARK in other or FOREIGN_COPY.search(other[:-3]):
                continue
            try:
                data = (self.root / path).read_bytes()
            except OSError:
                continue  # gone meanwhile, or unreadable: not this entity's note as far as this pass can tell
            if any(view in data for view in views) or _views_own_folder(data, other[:-3]):
                found.append(other)
            elif _ENTITY_PROPS.match(data):
                rendered.append(other)
        # Its view deleted as well: the one note holding the properties vaultsync renders for an entity.
        return found or (rendered if len(rendered) == 1 and has_facts else [])

    def read_entity(self, rel_dir: str, rel: str, notes: list[str], has_facts: bool) -> None:
        problem = next((p for p in map(name_problem, rel.split("/")[1:]) if p), None)
        if problem:
            self.scan.problems.append(Problem(rel_dir, f"entity folder skipped: {problem}"))
            return
        if self.listing:
            self.found.append(rel)
        note = self.read(f"{rel_dir}/{notes[0]}", "entity") if len(notes) == 1 and not self.listing else None
        if len(notes) > 1:
            # Which of them stands for the summary cannot be told: the entity waits rather than losing either.
            named = ", ".join(notes)
            slug = slug_of(rel)
            self.scan.problems.append(
                Problem(
                    rel_dir,
                    f"several notes look like the entity's note renamed ({named}); keep one and name it "
                    f"{slug}.md; left untouched on both sides",
                    Severity.WARNING,
                    standing=True,
                )
            )
            note = Note(f"{rel_dir}/{slug}.md", b"", broken=True)
        entity = VaultEntity(rel, note)
        if has_facts:
            for path, stem in self.fact_notes(f"{rel_dir}/{FACTS_DIR}"):
                fact_note = None if self.listing else self.read(path, "fact")
                if fact_note:
                    entity.facts[stem] = fact_note
        if not self.listing:
            self.scan.entities[rel] = entity

    def fact_notes(self, facts_dir: str) -> Iterator[tuple[str, str]]:
        """(path, name) of each fact note in ``facts_dir``, conflict copies and other programs' copies aside."""
        for entry in self.entries(facts_dir):
            path = f"{facts_dir}/{entry.name}"
            if entry.is_file(follow_symlinks=False) and entry.name.endswith(".md") and not self.skip_copy(path):
                yield path, entry.name[:-3]

    def candidate(self, rel_path: str) -> None:
        if self.skip_copy(rel_path):
            return
        mem_path = self.layout.file_for_note(rel_path)
        if mem_path is None:
            self.scan.foreign.append(rel_path)
            return
        if self.listing:
            self.scan.files[mem_path] = Note(rel_path, b"")
            return
        twin = self.scan.files.get(mem_path)
        if twin is not None:
            # A note where vaultsync once put the file and one where it goes now: either may be the person's.
            problem = f"two notes stand for {mem_path.removeprefix('workspace/')}: {twin.path} and this one; keep one"
            self.scan.problems.append(Problem(rel_path, f"{problem}; both left untouched on both sides", standing=True))
            self.scan.files[mem_path] = Note(twin.path, b"", broken=True)
            return
        note = self.read(rel_path, "file")
        if note:
            self.scan.files[mem_path] = note

    def walk_mirror(self, rel_dir: str) -> None:
        for entry in self.entries(rel_dir):
            child = f"{rel_dir}/{entry.name}"
            if entry.is_symlink():
                continue
            if entry.is_dir():
                self.walk_mirror(child)
            elif entry.name.endswith(".md"):
                self.candidate(child)

    def walk_daily(self, folder: str | None = None, only: Collection[str] | None = None) -> None:
        """Daily notes in the daily folder and its date sub-folders (``Daily/2026/11/2026-11-27.md``); ``only``:
        just those file names. Two notes for one day are reported and neither is read: either could be the one
        the person means, and reading one would take the other's text for deleted."""
        folder = self.layout.daily_dir if folder is None else folder
        for entry in self.entries(folder):
            path = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                if self.layout.in_daily(path) and path not in self.layout.reserved_dirs():
                    self.walk_daily(path, only)
            elif not entry.is_file(follow_symlinks=False) or (only is not None and entry.name not in only):
                continue
            elif CONFLICT_MARK in entry.name:
                self.candidate(path)
            elif day_note_date(entry.name):
                mem_path = f"workspace/memory/{entry.name}"
                twin = self.scan.files.get(mem_path)
                if twin is None:
                    self.candidate(path)
                else:
                    kind = "daily note" if daily_date(entry.name) else "session note"
                    problem = f"two notes stand for the {kind} {entry.name}: {twin.path} and this one; keep one"
                    self.scan.problems.append(
                        Problem(path, f"{problem}; both left untouched on both sides", standing=True)
                    )
                    self.scan.files[mem_path] = Note(twin.path, b"", broken=True)


# The filter line of ``facts_view``, capturing the name of the folder whose facts it shows.
_VIEW_FOLDER = re.compile(rb'^    - file\.inFolder\("(?:[^"\n]*/)?([^"/\n]+)/facts"\)$', re.MULTILINE)


# The opening of an entity note as vaultsync renders it: properties naming its kind and counting its facts.
_ENTITY_PROPS = re.compile(rb"\A(?:\xef\xbb\xbf)?---\r?\n(?:(?!---\r?\n).*\n)*?facts_active: \d+\r?\n")


def _views_own_folder(data: bytes, stem: str) -> bool:
    """The note holds vaultsync's view of the facts of a folder named as the note: an entity note whose folder
    was renamed around it."""
    if VIEW_MARKER.encode() not in data:
        return False
    return any(m.group(1).decode("utf-8", "replace") == stem for m in _VIEW_FOLDER.finditer(data))


def scan_vault(root: Path, layout: VaultLayout) -> VaultScan:
    return _walk(_Scanner(root, layout)).scan


def list_vault(root: Path, layout: VaultLayout) -> VaultListing:
    """What ``scan_vault`` would read, found the same way but not read."""
    scanner = _walk(_Scanner(root, layout, listing=True))
    found = scanner.scan
    return VaultListing(
        scanner.found, list(found.files), found.conflict_copies, found.foreign, found.problems, found.leftovers
    )


def list_fact_notes(root: Path, layout: VaultLayout, rels: Iterable[str]) -> dict[str, set[str]]:
    """The names of the fact notes of each entity in ``rels``, found as a scan finds them, none read: what
    pairs an entity folder the person moved with the one it left."""
    scanner = _Scanner(root, layout, listing=True)
    return {rel: {name for _, name in scanner.fact_notes(f"{layout.entity_dir(rel)}/{FACTS_DIR}")} for rel in rels}


def _walk(scanner: _Scanner) -> _Scanner:
    for folder in scanner.layout.layout.para_folders().values():
        if (scanner.root / folder).is_dir():
            scanner.walk_para(folder)
    scanner.walk_daily()
    return scanner


def scan_vault_scope(root: Path, layout: VaultLayout, rels: Iterable[str], files: Iterable[str]) -> VaultScan:
    """Read only the entity folders of ``rels`` and the notes of the memory files ``files``.

    Folders nested in an entity folder are entities of their own and are not read; of the other notes beside
    the entity note, only conflict copies matter to a pass (to know which are open).
    """
    scanner = _Scanner(root, layout)
    for rel in sorted(rels, key=lambda rel: rel.split("/")):  # the order a full walk meets them in
        rel_dir = layout.entity_dir(rel)
        entries = scanner.entries(rel_dir)
        names = {e.name for e in entries if e.is_file(follow_symlinks=False)}
        has_facts = any(e.name == FACTS_DIR and e.is_dir(follow_symlinks=False) for e in entries)
        notes = scanner.entity_notes(rel_dir, rel, slug_of(rel), names, has_facts)
        if notes or has_facts:
            scanner.read_entity(rel_dir, rel, notes, has_facts)
        scanner.scan.conflict_copies += [
            f"{rel_dir}/{e.name}"
            for e in entries
            if CONFLICT_MARK in e.name and e.name.endswith(".md") and e.is_file(follow_symlinks=False)
        ]
    for mem_path in sorted(files):
        note = layout.file_note(mem_path)
        if note and (root / note).is_file():
            scanner.candidate(note)
    return scanner.scan


def find_daily_notes(root: Path, layout: VaultLayout, names: Collection[str]) -> dict[str, str]:
    """Where the daily notes named ``names`` are, in the daily folder or a date sub-folder of it, none read:
    memory path -> vault path (a note for a day that has two is given as the first)."""
    scanner = _Scanner(root, layout, listing=True)
    scanner.walk_daily(only=names)
    return {mem_path: note.path for mem_path, note in scanner.scan.files.items()}
