"""Reading the agent's memory tree: entities (items.json + summary.md), daily notes and other files.

Reading never writes. Each unreadable input becomes one Problem naming the file, and the rest of the scan goes
on; an entity whose items.json cannot be read is marked broken so that no pass deletes or overwrites its facts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vaultsync.memory.items import (
    ItemsDoc,
    ItemsError,
    describe_json_type,
    lone_surrogate,
    may_hold_surrogates,
    parse_items,
)
from vaultsync.model import PARA_KEYS, WORKSPACE_FILES, EntityContent, Problem, Record, Severity
from vaultsync.names import daily_date, fold, name_problem
from vaultsync.system.fs import BEING_WRITTEN, BeingWritten, is_leftover, read_whole
from vaultsync.system.users import user_files
from vaultsync.text.decoding import NotText, decode, strip_bom
from vaultsync.text.yamlcore import YamlError, parse_properties, split_note

DATE_LIKE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}\.md$")
MOVE_INTO_ENTITY = "an entity is a folder of its own, as life/areas/people/sarah/items.json; move it into one"


@dataclass
class Summary:
    """summary.md as read: the parts the vault shows plus what is needed to write it back unchanged."""

    raw: bytes
    content: EntityContent
    fm_text: str | None
    bom: bool


@dataclass
class MemEntity:
    rel: str
    folder: Path
    items_raw: bytes | None = None
    doc: ItemsDoc | None = None
    broken: bool = False  # items.json exists but cannot be read: its facts are unknown this pass
    summary: Summary | None = None
    summary_broken: bool = False
    facts: list[tuple[int, Record]] = field(default_factory=list)  # (position in the list, record)
    unread_facts: int = 0  # facts that are there but cannot be read: their notes are left as they are

    @property
    def content(self) -> EntityContent:
        return self.summary.content if self.summary else EntityContent({}, "")


@dataclass
class MemFile:
    mem_path: str  # "workspace/..." or "life/..."
    path: Path
    raw: bytes
    broken: bool = False  # not text: its note is left alone until the file is fixed, never taken as deleted


@dataclass
class MemoryScan:
    entities: dict[str, MemEntity] = field(default_factory=dict)
    files: dict[str, MemFile] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)  # temp files of a killed pass


def parse_summary(raw: bytes) -> Summary:
    """Split summary.md into its own properties and its body; a block that is not YAML stays body text."""
    text, bom = strip_bom(decode(raw))
    fm_text, body = split_note(text)
    if fm_text is not None:
        try:
            props = parse_properties(fm_text)
        except YamlError:
            return Summary(raw, EntityContent({}, text), None, bom)
        return Summary(raw, EntityContent(props, body), fm_text, bom)
    return Summary(raw, EntityContent({}, text), None, bom)


class _Scanner:
    def __init__(self, workspace: Path, life: Path, reserved: frozenset[str], listing: bool = False) -> None:
        self.workspace = workspace
        self.life = life
        self.reserved = reserved
        self.listing = listing  # find entities and files with the same checks, but read none of them
        self.scan = MemoryScan()
        self.found = MemoryListing()

    def problem(self, path: Path, message: str, severity: Severity = Severity.ERROR, standing: bool = False) -> None:
        self.scan.problems.append(Problem(str(path), message, severity, standing))

    def fault(self, path: Path, message: str, severity: Severity = Severity.ERROR) -> None:
        """A problem in what the file at ``path`` holds, found again on every read of it (``Problem.standing``)."""
        self.problem(path, message, severity, standing=True)

    def _entries(self, folder: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
                self.scan.leftovers += [Path(e.path) for e in entries if is_leftover(e.name)]
                return entries
        except OSError as exc:
            self.problem(folder, f"cannot read folder: {exc.strerror}")
            return []

    def _symlink(self, entry: os.DirEntry[str], root: Path) -> None:
        target = Path(entry.path).resolve()
        inside = target == root.resolve() or root.resolve() in target.parents
        if inside:
            self.problem(Path(entry.path), "symbolic link, not followed", Severity.NOTE)
        else:
            self.problem(Path(entry.path), f"symbolic link pointing outside the memory tree ({target}), skipped")

    # -- life/ -------------------------------------------------------------------------------------------
    def walk_life(self, folder: Path, rel: str) -> None:
        entries = self._entries(folder)
        names = {e.name for e in entries if e.is_file(follow_symlinks=False)}
        is_entity = bool(rel) and ("items.json" in names or "summary.md" in names)
        if is_entity:
            self.read_entity(folder, rel, entries)
        seen: dict[str, str] = {}
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child_rel = f"{rel}/{entry.name}" if rel else entry.name
            path = Path(entry.path)
            if entry.is_symlink():
                self._symlink(entry, self.life)
                continue
            folded = fold(entry.name)
            if folded in seen:
                self.problem(path, f"differs from {seen[folded]!r} only in case; both are kept", Severity.WARNING)
            seen[folded] = entry.name
            if entry.is_dir():
                problem = name_problem(entry.name)
                if problem:
                    self.problem(path, f"folder skipped: {problem}")
                    continue
                if is_entity and entry.name == "facts":
                    self.problem(path, "a folder named 'facts' inside an entity clashes with its fact notes; skipped")
                    continue
                if child_rel in self.reserved:
                    self.problem(path, "this folder's place in the vault holds the workspace files; rename it; skipped")
                    continue
                self.walk_life(path, child_rel)
            elif entry.is_file():
                if is_entity and entry.name in ("items.json", "summary.md"):
                    continue
                if is_entity and entry.name == f"{folder.name}.md":
                    self.problem(path, "has the name of its entity's note in the vault; rename it; skipped")
                    continue
                self.life_file(path, child_rel)

    def life_file(self, path: Path, rel: str) -> None:
        if rel == "items.json":
            # Facts need an entity to belong to: left here they would silently never reach the vault.
            self.problem(path, f"facts directly in life/ belong to no entity; {MOVE_INTO_ENTITY}; skipped")
            return
        if not rel.endswith(".md"):
            hint = "; vaultsync reads facts from items.json only" if path.name.startswith("items.") else ""
            self.problem(path, f"not markdown, left out of the vault{hint}", Severity.NOTE)
            return
        bad = next((p for p in (name_problem(part) for part in rel[:-3].split("/")) if p), None)
        if bad:
            self.problem(path, f"skipped: {bad}")
            return
        self.add_file(f"life/{rel}", path)

    def add_file(self, mem_path: str, path: Path) -> None:
        if self.listing:
            self.found.files.append(mem_path)
            return
        try:
            raw = read_whole(path)
            decode(raw)
        except BeingWritten:
            self.problem(path, BEING_WRITTEN, Severity.WARNING)
            self.scan.files[mem_path] = MemFile(mem_path, path, b"", broken=True)
            return
        except NotText as exc:
            self.fault(path, f"{exc}; left untouched on both sides")
            self.scan.files[mem_path] = MemFile(mem_path, path, raw, broken=True)
            return
        except OSError as exc:
            self.problem(path, f"cannot read: {exc.strerror}")
            return
        self.scan.files[mem_path] = MemFile(mem_path, path, raw)

    def read_entity(self, folder: Path, rel: str, entries: list[os.DirEntry[str]]) -> None:
        if rel in PARA_KEYS:
            held = " and ".join(e.name for e in entries if e.name in ("items.json", "summary.md"))
            self.problem(folder / held.split(" ")[0], f"{held} directly in life/{rel}/: {MOVE_INTO_ENTITY}; skipped")
            return
        if rel.split("/", 1)[0] not in PARA_KEYS or "/" not in rel:
            self.problem(folder, "entity folder outside life/<projects|areas|resources|archives>/; skipped")
            return
        if self.listing:
            self.found.rels.append(rel)
            return
        entity = MemEntity(rel=rel, folder=folder)
        names = {e.name: e for e in entries}
        summary_entry = names.get("summary.md")
        if summary_entry and summary_entry.is_file(follow_symlinks=False):
            path = folder / "summary.md"
            try:
                entity.summary = parse_summary(read_whole(path))
            except BeingWritten:
                entity.summary_broken = True
                self.problem(path, BEING_WRITTEN, Severity.WARNING)
            except NotText as exc:
                entity.summary_broken = True
                self.fault(path, f"{exc}; left untouched")
        items_entry = names.get("items.json")
        if items_entry and items_entry.is_file(follow_symlinks=False):
            self.read_items(entity, folder / "items.json")
        self.scan.entities[rel] = entity

    def read_items(self, entity: MemEntity, path: Path) -> None:
        try:
            raw = read_whole(path)
        except BeingWritten:
            entity.broken = True
            self.problem(path, BEING_WRITTEN, Severity.WARNING)
            return
        entity.items_raw = raw
        try:
            doc = parse_items(raw)
        except ItemsError as exc:
            entity.broken = True
            self.fault(path, f"{exc}; its facts are left untouched on both sides")
            return
        entity.doc = doc
        seen_ids: dict[str, str] = {}
        suspect = may_hold_surrogates(doc.text)
        for entry in doc.entries:
            if not isinstance(entry.value, dict):
                what = describe_json_type(entry.value)
                self.fault(path, f"fact #{entry.index + 1} is {what}, not an object; skipped")
                continue
            cut = lone_surrogate(entry.value) if suspect else None
            if cut:
                entity.unread_facts += 1
                self.fault(
                    path,
                    f"fact #{entry.index + 1} holds {cut}, half of a character cut in two (an emoji split by a "
                    "JavaScript string slice?), which no UTF-8 file can hold; its note is left as it is until "
                    "the escape is removed or completed",
                )
                continue
            fact_id = entry.value.get("id")
            if fact_id is not None:
                problem = name_problem(fact_id) if isinstance(fact_id, str) else "id is not a string"
                if problem:
                    self.fault(path, f"fact #{entry.index + 1}: {problem}; skipped")
                    continue
                twin = seen_ids.get(fold(fact_id))
                if twin is not None:
                    self.fault(
                        path,
                        f"fact id {fact_id!r} repeats {twin!r} (case-insensitively); its note name gets a suffix",
                        Severity.WARNING,
                    )
                seen_ids.setdefault(fold(fact_id), fact_id)
            entity.facts.append((entry.index, entry.value))

    # -- workspace -------------------------------------------------------------------------------------
    def walk_workspace(self) -> None:
        for name in [*WORKSPACE_FILES, *user_files(self.workspace)]:
            path = self.workspace / name
            if path.is_symlink():
                self.problem(path, "symbolic link, not followed")
            elif path.is_file():
                self.add_file(f"workspace/{name}", path)
        memory = self.workspace / "memory"
        if memory.is_symlink():
            # Followed, a link could lead the pass's writes and deletions anywhere; ignored without a word, the
            # daily notes would silently never sync. It is refused, every pass, with the way out.
            self.problem(
                memory,
                f"symbolic link (to {memory.resolve()}), not followed, so no daily note syncs; replace the link "
                "by the folder it points to, or set [paths].workspace to the folder that holds the real memory/",
            )
        elif memory.is_dir():
            self.walk_memory(memory, "")

    def walk_memory(self, folder: Path, rel: str) -> None:
        for entry in self._entries(folder):
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            path = Path(entry.path)
            if entry.is_symlink():
                self._symlink(entry, self.workspace)
            elif entry.is_dir():
                problem = name_problem(entry.name)
                if problem:
                    self.problem(path, f"folder skipped: {problem}")
                else:
                    self.walk_memory(path, child)
            elif not entry.name.endswith(".md"):
                self.problem(path, "not markdown, left out of the vault", Severity.NOTE)
            elif not rel and DATE_LIKE.match(entry.name) and daily_date(entry.name) is None:
                self.problem(path, "the name looks like a daily note but is not a real date (YYYY-MM-DD); skipped")
            else:
                problem = name_problem(entry.name[:-3])
                if problem:
                    self.problem(path, f"skipped: {problem}")
                else:
                    self.add_file(f"workspace/memory/{child}", path)


def scan_memory(workspace: Path, life: Path, reserved: frozenset[str] = frozenset()) -> MemoryScan:
    """Read both memory roots. ``reserved`` names life/ folders whose vault place is taken by workspace files."""
    return _walk(_Scanner(workspace, life, reserved)).scan


@dataclass
class MemoryListing:
    """The entities and files a scan would read, for reading them a batch at a time."""

    rels: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # memory paths
    problems: list[Problem] = field(default_factory=list)  # those the walk itself finds (names, links, folders)
    leftovers: list[Path] = field(default_factory=list)


def list_memory(workspace: Path, life: Path, reserved: frozenset[str] = frozenset()) -> MemoryListing:
    """What ``scan_memory`` would read, found the same way but not read."""
    scanner = _walk(_Scanner(workspace, life, reserved, listing=True))
    scanner.found.problems = scanner.scan.problems
    scanner.found.leftovers = scanner.scan.leftovers
    return scanner.found


def _walk(scanner: _Scanner) -> _Scanner:
    for root, what in ((scanner.workspace, "workspace"), (scanner.life, "life")):
        if not root.is_dir():
            scanner.problem(root, f"the {what} root is missing")
    if scanner.life.is_dir():
        scanner.walk_life(scanner.life, "")
    if scanner.workspace.is_dir():
        scanner.walk_workspace()
    return scanner


def scan_memory_scope(workspace: Path, life: Path, rels: Iterable[str], files: Iterable[str]) -> MemoryScan:
    """Read only the entities ``rels`` and the files ``files`` (memory paths), as ``scan_memory`` reads them.

    A scoped pass uses it for what the quick check found changed; the names were read by an earlier full scan
    (or are new daily notes), so the checks that scan makes on a name are not repeated here.
    """
    scanner = _Scanner(workspace, life, frozenset())
    for rel in sorted(rels, key=lambda rel: rel.split("/")):  # the order a full walk meets them in
        folder = life / rel
        if folder.is_symlink() or not folder.is_dir():
            continue
        entries = scanner._entries(folder)
        if {"items.json", "summary.md"} & {e.name for e in entries if e.is_file(follow_symlinks=False)}:
            scanner.read_entity(folder, rel, entries)
    for mem_path in sorted(files):
        root, _, rest = mem_path.partition("/")
        path = (workspace if root == "workspace" else life) / rest
        if path.is_symlink():
            scanner.problem(path, "symbolic link, not followed")
        elif not path.is_file():
            continue
        elif root == "life":
            scanner.life_file(path, rest)
        else:
            scanner.add_file(mem_path, path)
    return scanner.scan
