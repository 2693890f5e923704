"""What the last settled pass saw, so that an hourly pass with nothing to do costs about what git pays to look
at the vault, not a read of every note.

A pass is settled when it ended with both sides agreeing and nothing left for later: no error or warning, no
write abandoned, no folder moved. It then records, in the state folder:

* ``snapshot.json``: every memory file's stat (size, mtime, ctime, inode) taken before the scan read it, or the
  sha1 of what the pass wrote there. A file modified within ``RACY_NS`` of that walk is recorded as unknown:
  a second edit in the same clock tick would leave its stat as it was.
* ``snapshot.index``: a private git index holding, for every note the vault scan read or the pass wrote, the
  blob of exactly those bytes. ``git status`` against it lists what changed since, with git's own stat cache
  and its racily-clean re-check. It starts as a copy of the repository's index (whose stat data is fresh for
  everything just committed), corrected to the expected blobs: an entry whose blob differs loses its stat
  data, so git re-reads that file instead of trusting it.

The next pass walks the small memory side, runs one ``git status`` and stops there when neither shows a change
in a place a pass reads. Anything doubtful (no snapshot, another version or config, an unknown entry, an
ignored folder inside a synced one) means a full pass, which is always correct; the snapshot only ever saves
work, it never decides a merge.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync import __version__
from vaultsync.config import Config
from vaultsync.fs import atomic_write, digest
from vaultsync.model import Problem, Severity

SNAPSHOT = "snapshot.json"
INDEX = "snapshot.index"
ENTITIES = "snapshot-entities.json"  # written with the snapshot; read by a scoped pass and a batched full one
FORMAT = 2  # bump when what a snapshot means changes
RACY_NS = 2_000_000_000  # coarser than any file system's timestamps (FAT keeps 2 s)
SUSPECTS_MAX = 2000  # more notes than this to hash on every quick check: better one more full pass
COARSE_CLOCK_NS = 20_000_000  # file times lag the wall clock by up to a timer tick
ZERO_OID = "0" * 40
PATHS_PER_CALL = 500  # paths given to one git command line, well under any system's argument limit

Stat = list[int]
Entry = Stat | list[str] | None  # a stat, ["sha1", hex digest] of what the pass wrote, or None: unknown


@dataclass
class MemoryWalk:
    """Every file a memory scan may read, with its stat at the start of the pass."""

    started_ns: int
    entries: dict[str, Entry] = field(default_factory=dict)  # "workspace/..." or "life/..." -> entry

    @functools.cached_property
    def racy(self) -> set[str]:
        """The files too fresh for their stat to be trusted: a pass records them by the bytes it read."""
        return {key for key, entry in self.entries.items() if entry is None}


def walk_memory(workspace: Path, life: Path) -> MemoryWalk:
    """Stat what ``scan_memory`` reads (a superset: extra files only make a pass run when they change)."""
    walk = MemoryWalk(time.time_ns())
    for name in ("MEMORY.md", "HEARTBEAT.md"):
        with contextlib.suppress(OSError):
            walk.entries[f"workspace/{name}"] = _entry(os.lstat(workspace / name), walk.started_ns)
    _walk(walk, "workspace/memory", workspace / "memory")
    _walk(walk, "life", life)
    return walk


def _entry(st: os.stat_result, started_ns: int) -> Entry:
    if st.st_mtime_ns >= started_ns - RACY_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _walk(walk: MemoryWalk, prefix: str, folder: Path | str) -> None:
    try:
        listing = os.scandir(folder)
    except OSError:
        return
    with listing:
        for item in listing:
            if item.name.startswith("."):
                continue
            key = f"{prefix}/{item.name}"
            if item.is_dir(follow_symlinks=False):
                _walk(walk, key, item.path)
            else:
                try:
                    walk.entries[key] = _entry(item.stat(follow_symlinks=False), walk.started_ns)
                except OSError:
                    walk.entries[key] = None


def _aged_stat(path: Path, data: bytes) -> Stat | None:
    """The stat of a file the walk found too fresh to trust, if it is old enough now and still holds ``data``.

    A tree copied just before a pass (a restore, a move to a new machine, a benchmark) is too fresh almost
    everywhere; recorded by hash, every quick check until the next writing pass would read all of it again (at
    200k facts, 71 MB). Read between two equal stats, the bytes belong to that stat, as for any file the walk
    trusts.
    """
    try:
        before = os.lstat(path)
        if before.st_mtime_ns >= time.time_ns() - RACY_NS:
            return None
        same = path.read_bytes() == data
        after = os.lstat(path)
    except OSError:
        return None
    stat = _entry(before, time.time_ns())
    return stat if same and stat is not None and stat == _entry(after, time.time_ns()) else None


def key_of(cfg: Config) -> str:
    """What a snapshot is only valid for: this code and this configuration (kept as text: hashing it would load
    OpenSSL before ``git status`` starts)."""
    return f"{FORMAT}|{__version__}|{cfg!r}"


def _file_stat(path: Path) -> Stat | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class QuickCheck:
    """The test "did anything change since the last settled pass?", run while the memory side is walked.

    ``git status`` on the vault is the slow half, so it starts first, before the snapshot is even read, and
    runs beside the rest: reading the snapshot, the memory walk. A snapshot found unusable stops it again.
    """

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.saved: dict[str, Any] | None = None
        self.status: subprocess.Popen[bytes] | None = None
        if not (cfg.state_dir / INDEX).exists():
            return
        # Looking must not write: a pass that stops or finds nothing leaves every file as it was.
        env = {**os.environ, "GIT_INDEX_FILE": str(cfg.state_dir / INDEX), "GIT_OPTIONAL_LOCKS": "0"}
        args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames"]
        try:
            self.status = subprocess.Popen(
                ["git", *args], cwd=cfg.vault, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            return
        try:
            saved = json.loads((cfg.state_dir / SNAPSHOT).read_bytes())
        except (OSError, ValueError):
            saved = None
        if (
            isinstance(saved, dict)
            and saved.get("key") == key_of(cfg)
            and saved.get("base") == _file_stat(cfg.state_dir / "base.sqlite")
        ):
            self.saved = saved
        else:
            self._stop()

    def _stop(self) -> None:
        """End a ``git status`` whose answer is of no use (the snapshot is not), so no full pass runs beside it."""
        if self.status is not None:
            self.status.kill()
            self.status.communicate()
            self.status = None

    def changes(self, walk: MemoryWalk) -> Seen | None:
        """What changed since the last settled pass; None when that cannot be known (a full pass must run)."""
        if self.saved is None or self.status is None:
            return None
        saved_memory = self.saved.get("memory")
        suspects = self.saved.get("suspects")
        if not isinstance(saved_memory, dict) or not isinstance(suspects, dict) or not _problems_ok(self.saved):
            self._stop()
            return None
        seen = Seen(self.saved, _changed_memory(saved_memory, walk, self.cfg), _changed_notes(suspects, self.cfg))
        out, _ = self.status.communicate()
        if self.status.returncode != 0:
            return None
        places = Places(self.cfg)
        for record in out.split(b"\0"):
            if not record:
                continue
            state, path = record[:2], record[3:].decode("utf-8", "surrogateescape")
            # The first column compares the snapshot with HEAD, which does not matter; the second is the worktree.
            if (state in (b"??", b"!!") or state[1:2] != b" ") and places.read_by_a_pass(path):
                (seen.odd if state == b"!!" else seen.vault).add(path)
        return seen


@dataclass
class Seen:
    """What the quick check found changed since the snapshot, in the snapshot's own terms."""

    saved: dict[str, Any]  # the snapshot as recorded
    memory: set[str]  # walk keys added, removed or changed
    vault: set[str]  # vault paths in synced places with another content, deleted or new
    odd: set[str] = field(default_factory=set)  # ignored folders inside synced places: only a full pass knows

    @property
    def nothing(self) -> bool:
        return not (self.memory or self.vault or self.odd)

    @property
    def conflicts(self) -> list[str]:
        return list(self.saved.get("conflicts", []))

    @property
    def problems(self) -> list[Problem]:
        """The standing problems the last settled pass found, each in a file unchanged unless ``memory`` or
        ``vault`` says otherwise."""
        saved = self.saved["problems"]
        return [Problem(path, message, Severity(severity), standing=True) for path, message, severity in saved]


def _problems_ok(saved: dict[str, Any]) -> bool:
    problems = saved.get("problems")
    return isinstance(problems, list) and all(
        isinstance(p, list) and len(p) == 3 and all(isinstance(x, str) for x in p) and p[2] in set(Severity)
        for p in problems
    )


def _changed_memory(saved: dict[str, Any], walk: MemoryWalk, cfg: Config) -> set[str]:
    changed = saved.keys() ^ walk.entries.keys()
    for key, entry in saved.items():
        if key in changed:
            continue
        if isinstance(entry, list) and entry[:1] == ["sha1"]:
            root, _, rel = key.partition("/")
            try:
                data = ((cfg.workspace if root == "workspace" else cfg.life) / rel).read_bytes()
            except OSError:
                data = None
            if data is None or digest(data) != entry[1]:
                changed.add(key)
        elif entry is None or entry != walk.entries[key]:
            changed.add(key)
    return changed


def _changed_notes(suspects: dict[str, Any], cfg: Config) -> set[str]:
    changed = set()
    for path, sha in suspects.items():
        try:
            data = (cfg.vault / path).read_bytes()
        except OSError:
            data = None
        if data is None or blob_id(data) != sha:
            changed.add(path)
    return changed


def _git(cfg: Config, *args: str, stdin: bytes | None = None, private: bool = True) -> bytes | None:
    """git on the snapshot index (``private``) or on the repository's own."""
    env = {k: v for k, v in os.environ.items() if k != "GIT_INDEX_FILE"}
    if private:
        env["GIT_INDEX_FILE"] = str(cfg.state_dir / INDEX)
    try:
        run = subprocess.run(["git", *args], cwd=cfg.vault, input=stdin, capture_output=True, env=env)
    except OSError:
        return None
    return run.stdout if run.returncode == 0 else None


class Places:
    """Which vault paths a full pass reads: notes under the PARA folders, and daily notes directly in Daily."""

    def __init__(self, cfg: Config) -> None:
        self.para = tuple(cfg.layout.para_folders().values())
        self.daily = cfg.layout.daily

    def read_by_a_pass(self, path: str) -> bool:
        folder = path.endswith("/")
        path = path.rstrip("/")
        if any(part.startswith(".") for part in path.split("/")):
            return False
        for top in self.para:
            if path == top or path.startswith(f"{top}/"):
                return folder or path.endswith(".md")
            if folder and top.startswith(f"{path}/"):
                return True
        if folder:
            return path == self.daily or self.daily.startswith(f"{path}/")
        return path.rpartition("/")[0] == self.daily and path.endswith(".md")


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob, without asking git."""
    return digest(b"blob %d\0" % len(data) + data)


def forget(cfg: Config) -> None:
    """Drop the snapshot: the next pass runs in full."""
    (cfg.state_dir / SNAPSHOT).unlink(missing_ok=True)


@dataclass
class Carry:
    """What a scoped pass keeps of the snapshot it started from: everything it did not read."""

    seen: Seen
    read: Callable[[str], bool]  # vault paths the scoped pass read (or would have): their old entries go
    before: set[str]  # the notes of the units in scope, as the snapshot knew them
    renamed: bool = False  # an entity in scope was created or renamed: the recorded names change


def record(
    cfg: Config,
    walk: MemoryWalk,
    memory_written: Mapping[str, bytes | None],
    memory_read: Mapping[str, bytes],
    notes: Mapping[str, str],
    left_alone: Iterable[str],
    conflicts: Iterable[str],
    entities: Mapping[str, Any],
    standing: Iterable[Problem] = (),
    patch: IndexPatch | None = None,
) -> None:
    """Write the snapshot of a settled pass.

    ``memory_written``: memory files the pass wrote (bytes) or deleted (None), keyed like the walk.
    ``memory_read``: memory files as the scan read them; one too fresh for its stat to be trusted is recorded
    by the hash of those bytes instead.
    ``notes``: the blob id (``blob_id``) of every vault note as the pass leaves it (what the scan read, then
    the pass's writes; deletions removed). ``left_alone``: notes in synced places the pass does not sync
    (conflict copies, foreign notes); their content does not matter to a pass, so git hashes them as they are.
    ``entities``: each entity's display name and aliases, which a scoped pass needs for the entities it does
    not read. ``standing``: the pass's standing problems (``Problem.standing``), for the quick check to say
    again. ``patch``: for a scoped pass, its snapshot index brought up to date with ``notes`` and
    ``left_alone`` (see ``IndexPatch``), and its ``Carry``: which the notes and memory files it read were;
    every other entry of the old snapshot is still true (the quick check just showed it unchanged) and is kept.
    """
    forget(cfg)
    entries = dict(walk.entries)
    if patch is not None:
        saved = patch.carry.seen.saved["memory"]
        for key, entry in walk.entries.items():
            if entry is None and key not in patch.carry.seen.memory:
                entries[key] = saved[key]  # checked by its hash in this pass's quick check
    for key, entry in walk.entries.items():
        if entry is None and key in memory_read:
            root, _, rel = key.partition("/")
            path = (cfg.workspace if root == "workspace" else cfg.life) / rel
            data = memory_read[key]
            entries[key] = _aged_stat(path, data) or ["sha1", digest(data)]
    for key, data in memory_written.items():
        if data is None:
            entries.pop(key, None)
        else:
            entries[key] = ["sha1", digest(data)]
    expected = notes
    token = os.urandom(8).hex()
    if patch is not None:
        suspects = patch.suspects()
        if patch.carry.renamed:  # an entity created or renamed: the names a scoped pass starts from change with it
            atomic_write(cfg.state_dir / ENTITIES, json.dumps({"token": token, "entities": entities}).encode())
        else:
            token = str(patch.carry.seen.saved.get("token"))
    elif _write_index(cfg, expected, sorted(set(left_alone))):
        suspects = _suspects(cfg, expected, _refresh(cfg))
        if len(suspects) > SUSPECTS_MAX:
            # A first import wrote every note in this second. Once it is past, a refresh records stat data git
            # can trust, instead of leaving thousands of notes to hash on every quick check.
            time.sleep(1.0 - time.time() % 1.0 + COARSE_CLOCK_NS / 1e9)
            suspects = _suspects(cfg, expected, _refresh(cfg))
        atomic_write(cfg.state_dir / ENTITIES, json.dumps({"token": token, "entities": entities}).encode())
    else:
        return
    if suspects is None or len(suspects) > SUSPECTS_MAX:
        return  # still changing under our feet: the next pass runs in full
    snapshot = {
        "key": key_of(cfg),
        "token": token,
        "suspects": suspects,
        "base": _file_stat(cfg.state_dir / "base.sqlite"),
        "conflicts": sorted(conflicts),
        "problems": [[p.path, p.message, str(p.severity)] for p in standing],
        "memory": entries,
    }
    atomic_write(cfg.state_dir / SNAPSHOT, json.dumps(snapshot).encode())


class IndexPatch:
    """``_patch_index`` on a thread, started once a scoped pass has written its notes.

    It reads and rewrites the whole snapshot index twice (about 70 ms at 50k notes) and touches nothing the
    pass's commits touch (they use the repository's own index), so it runs while they do. Only a settled pass
    records the snapshot that trusts this index; an unsettled one leaves none, and the next pass, a full one,
    builds the index afresh. ``suspects`` waits for it: every pass does before it ends, so that no later quick
    check (in watch mode, in the same process) reads the index while it is being written.
    """

    def __init__(self, cfg: Config, carry: Carry, expected: Mapping[str, str], left_alone: Iterable[str]) -> None:
        self.carry = carry
        self._outcome: list[dict[str, str] | BaseException | None] = []
        self._thread = threading.Thread(
            target=self._run, args=(cfg, carry, expected, sorted(set(left_alone))), name="vaultsync-snapshot"
        )
        self._thread.start()

    def _run(self, cfg: Config, carry: Carry, expected: Mapping[str, str], left_alone: list[str]) -> None:
        try:
            self._outcome.append(_patch_index(cfg, carry, expected, left_alone))
        except BaseException as exc:  # handed to the pass, which waits for this thread
            self._outcome.append(exc)

    def suspects(self) -> dict[str, str] | None:
        """The notes the next quick check hashes itself (see ``_suspects``); None when git refused."""
        self._thread.join()
        outcome = self._outcome[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _patch_index(
    cfg: Config, carry: Carry, expected: Mapping[str, str], left_alone: list[str]
) -> dict[str, str] | None:
    """Bring the snapshot index from the last settled pass up to this scoped one; returns the suspects.

    Only the notes the pass read or wrote and the copies it left alone change. Each is hashed from disk with
    its stat data (``update-index --add``); one whose blob is not what the pass expects (saved again since)
    is set to the expected blob without stat data, so the next quick check sees it changed. Every other entry
    keeps the stat data git recorded before, so its suspects stay the old ones.
    """
    fresh = set(expected) | set(left_alone)
    gone = sorted((carry.before | carry.seen.vault) - fresh)
    started = time.time_ns()
    present = [p for p in sorted(fresh) if os.path.lexists(cfg.vault / p)]
    listing = "".join(f"{path}\0" for path in present).encode()
    if listing and _git(cfg, "update-index", "--add", "-z", "--stdin", stdin=listing) is None:
        return None
    held = _indexed(cfg, present) if present else {}
    if held is None:
        return None
    lines = [f"0 {ZERO_OID}\t{path}\0" for path in gone]  # not among the fresh paths, so in any order
    lines += [f"100644 {sha}\t{path}\0" for path, sha in expected.items() if held.get(path) != sha]
    if lines and _git(cfg, "update-index", "-z", "--index-info", stdin="".join(lines).encode()) is None:
        return None
    old: dict[str, str] = carry.seen.saved.get("suspects", {})
    suspects = {p: sha for p, sha in old.items() if p not in fresh and p not in gone}
    return suspects | _suspects(cfg, {p: sha for p, sha in expected.items() if p in held}, started)


def entities(cfg: Config, seen: Seen) -> dict[str, Any] | None:
    """The entity names recorded with the snapshot ``seen`` came from; None when they do not belong to it."""
    try:
        saved = json.loads((cfg.state_dir / ENTITIES).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(saved, dict) or saved.get("token") != seen.saved.get("token"):
        return None
    found = saved.get("entities")
    return found if isinstance(found, dict) else None


def _indexed(cfg: Config, paths: list[str] | None = None) -> dict[str, str] | None:
    """Path -> blob id of every entry of the snapshot index, or of those at ``paths``."""
    if paths is None:
        listing = _git(cfg, "ls-files", "--stage", "-z")
    else:
        chunks = [paths[i : i + PATHS_PER_CALL] for i in range(0, len(paths), PATHS_PER_CALL)]
        parts = [_git(cfg, "--literal-pathspecs", "ls-files", "--stage", "-z", "--", *chunk) for chunk in chunks]
        listing = None if None in parts else b"".join(p for p in parts if p)
    return None if listing is None else dict(_entries(listing))


def _entries(listing: bytes) -> Iterator[tuple[str, str]]:
    """(path, blob id) of each record of ``ls-files --stage -z`` output, one at a time."""
    start = 0
    while (end := listing.find(b"\0", start)) != -1:
        meta, _, path = listing[start:end].decode("utf-8", "surrogateescape").partition("\t")
        start = end + 1
        if path:
            yield path, meta.split(" ")[1]


def _refresh(cfg: Config) -> int:
    """Record stat data in the snapshot index; returns when the refresh started (ns).

    Exit status 1 only says some file differs from its entry, which the next git status reports anyway.
    """
    started = time.time_ns()
    _git(cfg, "update-index", "-q", "--refresh")
    return started


def _suspects(cfg: Config, expected: Mapping[str, str], refreshed_ns: int) -> dict[str, str]:
    """Notes git could take for unchanged when they are not: changed in the second the index was refreshed.

    git compares stat times in whole seconds, and its racily-clean check looks at mtime only, so a same-size
    edit that also restores the mtime within that second would pass for clean. Quick checks hash these few
    notes themselves. File times come from a coarse clock that may lag by a tick, hence the margin.
    """
    cutoff = refreshed_ns // 1_000_000_000 * 1_000_000_000 - COARSE_CLOCK_NS
    root = f"{cfg.vault}/"
    suspects = {}
    for path, sha in expected.items():
        try:
            st = os.lstat(root + path)
        except OSError:
            continue  # gone already: git status shows it
        if st.st_ctime_ns >= cutoff or st.st_mtime_ns >= cutoff:
            suspects[path] = sha
    return suspects


def _write_index(cfg: Config, expected: Mapping[str, str], left_alone: list[str]) -> bool:
    """Make the snapshot index hold ``expected`` (path -> blob id) plus ``left_alone`` as they are now."""
    index = cfg.state_dir / INDEX
    index.with_name(INDEX + ".lock").unlink(missing_ok=True)  # only vaultsync uses it, under the run lock
    if (_git(cfg, "rev-parse", "--show-object-format") or b"").strip() != b"sha1":
        return False
    # Start from the repository's index: its stat data is fresh for everything just committed. copy2 keeps
    # the file's mtime, which git's racily-clean check compares entries against.
    real = Path((_git(cfg, "rev-parse", "--git-path", "index", private=False) or b"").decode().strip() or ".git/index")
    import shutil

    try:
        shutil.copy2(cfg.vault / real, index)
    except OSError:
        index.unlink(missing_ok=True)
    listing = _git(cfg, "ls-files", "--stage", "-z") if index.exists() else b""
    if listing is None:
        return False
    # Compared entry by entry as git lists them: at 200k notes a dict of the listing would double the memory
    # a first import needs.
    keep = set(left_alone)
    lines: list[str] = []
    found = 0
    kept: set[str] = set()
    for path, sha in _entries(listing):
        want = expected.get(path)
        if want is None and path in keep:
            kept.add(path)
        elif want is None:
            lines.append(f"0 {ZERO_OID}\t{path}\0")
        else:
            found += 1
            if want != sha:
                lines.append(f"100644 {want}\t{path}\0")
    if found < len(expected):
        held = {path for path, _ in _entries(listing)}
        lines += [f"100644 {sha}\t{path}\0" for path, sha in expected.items() if path not in held]
    if lines and _git(cfg, "update-index", "-z", "--index-info", stdin="".join(lines).encode()) is None:
        return False
    added = "".join(f"{path}\0" for path in left_alone if path not in kept).encode()
    return not added or _git(cfg, "update-index", "--add", "-z", "--stdin", stdin=added) is not None
