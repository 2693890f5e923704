"""What every kind of pass shares once it has decided: the setting it runs in, the repository, the commits (the
person's edits first, then the agent's side, each checked for secrets), the conflict copies the person resolved,
and the folders a pass must find before it writes.

The order a pass follows from here: commit the person's edits -> drop the snapshot -> list the notes about to be
written -> apply -> commit the agent's side -> save the base -> record the snapshot when the pass settled. The
strategies (``full.py``, ``batched.py``, ``first_import.py``) differ in how they read and write, batch by batch or
at once; each step they share is here, written once.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container, Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from vaultsync import disk
from vaultsync.config import Config, Layout
from vaultsync.core.changes import message, unchanged_notes
from vaultsync.core.guard import changed_settings, relocated, stranded
from vaultsync.core.units import World
from vaultsync.core.vanished import gone, hold
from vaultsync.fs import set_aside
from vaultsync.git.index import blob_id
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import Author, GitFailed, NotARepository
from vaultsync.git.secrets import scan_bytes
from vaultsync.keys import is_file, mem_path_of, rel_of, scope_of
from vaultsync.model import PERSON, Actor, Change, Problem, Report, Severity
from vaultsync.options import PassOptions
from vaultsync.state import snapshot
from vaultsync.state.base import BaseStore
from vaultsync.state.files import StateFiles
from vaultsync.state.walk import MemoryWalk
from vaultsync.vault.layout import VaultLayout
from vaultsync.vault.scan import find_elsewhere


@dataclass(frozen=True)
class Setting:
    """What every way of running a pass shares: the config and options, the layout, the base, the day, and the
    memory walk the quick check made."""

    cfg: Config
    options: PassOptions
    layout: VaultLayout
    store: BaseStore
    today: date
    walk: MemoryWalk

    @property
    def files(self) -> StateFiles:
        return StateFiles(self.cfg.state_dir)


def open_repo(cfg: Config, report: Report) -> VaultRepo | None:
    """The vault's repository when a pass may write to it; None (with the reason in the report) when not."""
    try:
        repo = VaultRepo(cfg.vault)
    except NotARepository:
        report.stopped = f"{cfg.vault} is not a git repository; run `vaultsync init` or `git init` there"
        return None
    busy = repo.busy()
    if busy:
        report.stopped = busy + "; nothing was written"
        return None
    return repo


def committable(repo_root: Path, paths: set[str], report: Report, checked: Collection[str] = ()) -> set[str]:
    """Leave out of the commit any file holding a secret: git history is forever. ``checked`` paths need no
    second look: git's index holds them as the pass wrote them, and what it wrote held none (they are
    committed as the index holds them, see ``VaultRepo.commit``)."""
    keep = paths.intersection(checked)
    for path in sorted(paths.difference(checked)):
        target = repo_root / path
        findings = scan_bytes(target.read_bytes()) if target.is_file() else []
        if findings:
            where = ", ".join(f"line {f.line}: {f.kind} {f.redacted}" for f in findings[:3])
            report.problems.append(
                Problem(path, f"holds a secret ({where}); synced locally but left out of git", Severity.WARNING)
            )
        else:
            keep.add(path)
    return keep


def commit(
    repo: VaultRepo,
    root: Path,
    paths: set[str],
    text: str,
    author: Author,
    report: Report,
    checked: Collection[str] = (),
) -> bool:
    """Commit ``paths`` as ``author``; False (with the reason reported) when git refused."""
    if not paths:
        return True
    try:
        sha = repo.commit(committable(root, paths, report, checked), text, author, staged=checked)
    except GitFailed as exc:
        report.problems.append(Problem(str(root), why(exc.stderr, root)))
        return False
    if sha:
        report.commits.append(sha)
    return True


def why(stderr: str, root: Path) -> str:
    """git's reason in one line; a full disk and a held lock are named, with what the person can do about it."""
    full = next((words for words in disk.FULL_WORDS if words in stderr), None)
    if full:  # before the lock: git names the lock file it failed to write
        return (
            f"git commit failed: the disk mounted at {disk.mount_of(root)} is full ({full}); free some space, "
            "then sync again: the next pass commits"
        )
    # index.lock, or a ref's lock (HEAD.lock, refs/heads/main.lock) that a killed git left behind
    lock = re.search(r"'([^']*\.lock)'", stderr)
    if lock:
        return (
            f"git commit failed: {lock.group(1)} exists (another git is running, or one was killed and left it); "
            "vaultsync does not delete it: when no git is running, delete that file and sync again"
        )
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"git commit failed: {lines[-1] if lines else 'no reason given'}"


def settled(report: Report) -> bool:
    """Nothing left for a later pass: no stop, and no error or warning but those about a file's own content,
    which stand until the file changes (the snapshot keeps them, to say again)."""
    return not report.stopped and all(p.severity is Severity.NOTE or p.standing for p in report.problems)


def missing_places(cfg: Config, layout: VaultLayout, base: Iterable[str]) -> str:
    """Folders the last sync filled that are gone now, on either side.

    Trigger: a top folder of the vault (``2 Areas``, ``Daily``) or of the memory tree (``life/areas``,
    ``memory/``) that held synced units is missing. Why: a renamed folder in the config, an unmounted disk or a
    half-done move looks exactly like "everything in it was deleted". Then: stop before writing (exit 4).
    """
    vault_tops: set[str] = set()
    memory_dirs: set[Path] = set()
    paras: set[str] = set()  # every entity's and fact's places follow from its PARA folder: one look per folder
    for key in base:
        if is_file(key):
            note = layout.note_for_key(key)
            vault_tops.add(note.split("/", 1)[0] if "/" in note else "")  # "": a daily note at the top
            root, _, sub = mem_path_of(key).partition("/")
            top = sub.split("/", 1)[0] if "/" in sub else ""
            memory_dirs.add((cfg.workspace if root == "workspace" else cfg.life) / top)
        else:
            paras.add(rel_of(key).split("/", 1)[0])
    for para in paras:
        vault_tops.add(layout.para_folder(para).split("/", 1)[0])
        memory_dirs.add(cfg.life / para)
    gone = [f"vault folder '{t}'" for t in sorted(vault_tops) if t and not (cfg.vault / t).is_dir()]
    gone += [f"memory folder {d}" for d in sorted(memory_dirs) if not d.is_dir()]
    if not gone:
        return ""
    return f"{', '.join(gone)} held synced notes and is missing (renamed in the config, or not mounted?)"


def changed_layout(cfg: Config, store: BaseStore) -> str:
    """Why a pass must stop because a ``[vault]`` folder setting changed while synced notes stayed put, or "".

    The base records the layout it was saved with; only when that differs are the old places looked at (one
    look per entity folder and mirrored file), so an unchanged config costs one query. ``--yes`` does not
    override this stop: the notes exist, they are only not where the config says.
    """
    recorded = store.layout()
    old = Layout.from_json(recorded) if recorded is not None and recorded != cfg.layout.as_json() else None
    if old is None:
        return ""
    places = relocated(VaultLayout(old), VaultLayout(cfg.layout), store.keys())
    found = sorted(p for p in places if (cfg.vault / p).exists())
    return stranded(changed_settings(old, cfg.layout), places, found)


def hold_moved(cfg: Config, layout: VaultLayout, world: World) -> None:
    """Before deciding: units whose note is gone from its place but still in the vault (moved where a pass does
    not read, evicted by iCloud) are left alone on both sides and reported, never deleted from the memory.
    The vault is searched only when some unit's note is gone."""
    missing = gone(world, layout)
    if missing:
        hold(world, missing, find_elsewhere(cfg.vault, layout, set(missing.values())))


def settle_conflicts(
    cfg: Config, layout: VaultLayout, known: dict[str, tuple[str, str]], moves: list[tuple[str, str]]
) -> tuple[list[str], dict[str, tuple[str, str, str]], list[str]]:
    """The conflict copies gone from where the store knows them, those of them carried along by a folder move
    (new path -> key, detail, old path), and those the person resolved by deleting them.

    A copy is resolved when the person deletes it; one that moved with its entity folder is open still.
    """
    gone = sorted(p for p in known if not (cfg.vault / p).exists())
    carried: dict[str, tuple[str, str, str]] = {}
    for old, new in moves:
        old_dir, new_dir = layout.entity_dir(old), layout.entity_dir(new)
        for path in gone:
            moved_to = new_dir + path[len(old_dir) :]
            if path.startswith(old_dir + "/") and (cfg.vault / moved_to).exists():
                key, detail = known[path]
                carried[moved_to] = (key.replace(old, new, 1), detail, path)
    resolved = [p for p in gone if not any(p.startswith(layout.entity_dir(old) + "/") for old, _ in moves)]
    return gone, carried, resolved


def commit_person(setting: Setting, repo: VaultRepo, report: Report, paths: set[str], changes: list[Change]) -> bool:
    """Commit the person's edits as the person, before anything is written: their words are in git whatever
    happens next. False (the pass stopped, with the reason) when git refused."""
    cfg = setting.cfg
    person = repo.author(PERSON, cfg.git)
    if not commit(repo, cfg.vault, paths, message("vault -> memory", changes), person, report):
        report.stopped = "could not commit the person's edits; nothing was written"
        return False
    return True


def unchanged_blobs(world: World, only: Container[str] | None = None) -> dict[str, tuple[str, str]]:
    """``unchanged_notes`` (of ``only``, when given), each with its unit's key and the blob id of the note as
    this pass read it."""
    notes = unchanged_notes(world)
    return {
        path: (key, blob_id(note.raw))
        for path, key in notes.items()
        if (only is None or path in only) and (note := world.units[key].vault_note) is not None
    }


def resaved(
    repo: VaultRepo, notes: Mapping[str, tuple[str, str]], leave: Collection[str]
) -> tuple[set[str], list[Change]]:
    """Of the notes whose units neither side changed (path -> key and the blob read, ``unchanged_blobs``), those
    the person saved again in another form (Obsidian reordering keys, dropping quotes): their bytes go in the
    person's commit, or they would stay uncommitted for good, since no pass writes them back.

    Only a note still as the pass read it counts: one changed since is a new edit, for the next pass to read.
    Left out: ``leave`` (notes a pass wrote whose agent commit is still to come) and a note holding a secret,
    kept out of git as the pass that wrote it said.
    """
    found = repo.modified(set(notes) - set(leave)) if notes else {}
    paths = {p for p, blob in found.items() if blob == notes[p][1] and not _holds_secret(repo.root / p)}
    changes = [Change("vault", scope_of(notes[p][0]), "re-saved") for p in sorted(paths)]
    return paths, changes


def touched_notes(cfg: Config) -> set[str]:
    """The vault's tracked files whose stat differs from git's index, found once before a pass in batches reads
    any: the only ones among its unchanged notes that can have been saved again (``resaved``)."""
    try:
        return VaultRepo(cfg.vault).touched()
    except (NotARepository, GitFailed):
        return set()  # the pass itself says why it cannot commit


def _holds_secret(path: Path) -> bool:
    try:
        return bool(scan_bytes(path.read_bytes()))
    except OSError:
        return True  # unreadable now: not committed this pass


def begin_writes(setting: Setting, leftovers: list[Path], stamp: str) -> None:
    """From here on files change: drop the snapshot (only a settled pass records a new one) and set aside what
    killed passes and editors left behind."""
    cfg = setting.cfg
    snapshot.forget(setting.files)
    set_aside(leftovers, (cfg.vault, cfg.workspace, cfg.life), setting.files.trash(stamp))


def commit_agent(
    setting: Setting,
    repo: VaultRepo,
    report: Report,
    paths: set[str],
    changes: list[Change],
    touched: list[str],
    checked: Collection[str] = (),
    clear: bool = True,
) -> bool:
    """Commit the vault notes the pass wrote as the agent, then (``clear``) clear the list of notes waiting for a
    commit; a first import clears it only once its base is committed too.

    False when git refused: the base is then not saved, so the units stay "converged but unknown", and the list
    of uncommitted notes stays for the next pass to commit.
    """
    cfg = setting.cfg
    agent = repo.author(setting.options.actor, cfg.git)
    text = message("memory -> vault", changes, touched)
    if setting.options.commit_subject:
        text = f"{setting.options.commit_subject}\n\n{text}"
    if not commit(repo, cfg.vault, paths, text, agent, report, checked):
        return False
    if clear:
        setting.files.all_committed()
    return True


def notes_once(report: Report, store: BaseStore, foreign: Iterable[str]) -> list[str]:
    """Say notes (a file vaultsync leaves alone, a folder it does not follow) once, not every hour: the report
    keeps those not said before, which are returned for the base to remember."""
    report.problems += [Problem(p, "not a vaultsync note; left alone", Severity.NOTE) for p in sorted(foreign)]
    reported = store.reported()
    fresh = sorted({p.path for p in report.problems if p.severity is Severity.NOTE} - reported)
    report.problems = [p for p in report.problems if p.severity is not Severity.NOTE or p.path in fresh]
    return fresh


def commit_files(cfg: Config, paths: Iterable[str], subject: str, actor: Actor, report: Report) -> None:
    """Commit vault files a use case wrote outside the places a pass carries (a review note, the files ``init``
    adds or adopts), as ``actor``; a file holding a secret is left out and reported, as in a pass."""
    repo = open_repo(cfg, report)
    if repo is not None:
        commit(repo, cfg.vault, set(paths), subject, repo.author(actor, cfg.git), report)
