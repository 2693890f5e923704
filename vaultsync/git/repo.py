"""The vault's git repository: commits with honest authors that hold exactly the paths a pass changed.

Commits are built with plumbing on a private index (``.git/vaultsync-index``): ``update-index`` with the pass's
paths, ``write-tree``, ``commit-tree`` and a compare-and-swap ``update-ref``. Why not ``git commit -- paths``:
pathspec matching costs paths x files, which is minutes for a first import of 50k notes, and a commit with
pathspecs rewrites the whole index twice. The private index also keeps whatever the person or obsidian-git
staged in the real index out of vaultsync's commits. The real index is brought up to date for the same paths
first, so ``git status`` stays clean and a later obsidian-git commit cannot undo vaultsync's work.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import subprocess
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from vaultsync.git import tree as gittree

FALLBACK_PERSON = ("vault person", "person@vaultsync.invalid")
LOCK_WAIT_SECONDS = 10.0
# git errors that pass by themselves: obsidian-git holding the index, or a note Obsidian was rewriting in place
# while git hashed it ("short read while indexing", "unstable object source data", "Unable to process path").
PASSING = (
    "index.lock",
    "short read",
    "failed to read",
    "unstable object source data",
    "Unable to process path",
    "updating files failed",
)
PRIVATE_INDEX = "vaultsync-index"
TREES_DIR = "vaultsync-trees"  # tree objects on their way into git (see ``_store_trees``)
HEAD_RETRIES = 5
COPY_ENTRIES_MIN = 500
ENTRIES_CHUNK = 1 << 20  # bytes of the index listing read at a time
TREE_EDIT_MAX = 200  # commits of up to this many paths edit HEAD's trees instead of using the private index
# From this many paths, new blobs are streamed into packs instead of a loose file each, PACK_CHUNK to a pack
# (also the notes a first import's ``IndexFeed`` puts in a pack).
# git >= 2.37 batches update-index's objects this way; older ones would make a pack per blob, so they keep
# loose objects.
PACK_PATHS_MIN = 500
PACK_CHUNK = 20_000
PACK_GIT_MIN = (2, 37)
# update-index reading paths from standard input, every new blob through bulk check-in into one pack
PACKED_UPDATE = ("-c", "core.bigFileThreshold=1", "update-index", "--add", "--remove", "-z", "--stdin")
# A first import's notes, stored in one pack as they are written (``IndexFeed``): deflated at zlib's fastest
# level, no delta search (git's own ``gc`` finds the deltas later). At 50k notes: 1.2 s of git's time, 21 MB,
# against 2.0 s and 18 MB with git's defaults.
FAST_IMPORT = ("-c", "pack.compression=1", "fast-import", "--quiet", "--depth=0")
ZERO_OID = "0" * 40


class GitFailed(RuntimeError):
    """A git command vaultsync ran failed; ``stderr`` is git's own words."""

    def __init__(self, args: list[str], stderr: str) -> None:
        super().__init__(f"{' '.join(args)}: {stderr.strip()}")
        self.stderr = stderr


@dataclass(frozen=True)
class Author:
    name: str
    email: str


class NotARepository(RuntimeError):
    """The vault folder is not the top of a git repository (none at all, or inside another one's tree)."""


def ensure_repo(root: Path) -> bool:
    """Create a repository at ``root`` unless one is there; True when one was created."""
    import git  # only `vaultsync init` creates repositories: a pass does not pay for importing GitPython

    try:
        git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        git.Repo.init(root, initial_branch="main")
        return True
    return False


def _git_dir(root: Path) -> Path:
    """The git directory of the repository whose top is ``root``; NotARepository otherwise.

    Asking git (rather than looking for ``.git``) finds what git itself would use: a ``.git`` file of a
    worktree or submodule, ``GIT_DIR``. A folder inside another repository's tree is not the vault's own.
    """
    try:
        run = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--show-toplevel"], cwd=root, capture_output=True, text=True
        )
    except (FileNotFoundError, NotADirectoryError):
        raise NotARepository(str(root)) from None
    lines = run.stdout.splitlines()
    if run.returncode != 0 or len(lines) != 2 or not Path(lines[1]).samefile(root):
        raise NotARepository(str(root))
    return Path(lines[0])


@functools.cache
def git_version() -> tuple[int, ...]:
    """The installed git's version numbers, ``(2, 39, 5)``; ``()`` when git does not say."""
    try:
        said = subprocess.run(["git", "version"], capture_output=True, text=True).stdout
    except OSError:
        return ()
    found = re.search(r"(\d+(?:\.\d+)+)", said)
    return tuple(int(n) for n in found.group(1).split(".")) if found else ()


class VaultRepo:
    """The vault's repository, driven through git's command line.

    Every operation here is git plumbing with a private index, standard input or a compare-and-swap, which
    GitPython would only pass through to the same commands; not importing it saves a cold pass ~0.13 s.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = _git_dir(root)

    def busy(self) -> str | None:
        """Why committing now could tangle the person's work (a merge, rebase, bisect, detached HEAD), or None.

        A checkout of an old commit (which a bisect is) puts old notes in the worktree: a pass would read them
        as the person's edits and undo newer memory.
        """
        git_dir = self.git_dir
        for marker, what in (
            ("MERGE_HEAD", "a merge"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or am"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
            ("BISECT_LOG", "a bisect"),
        ):
            if (git_dir / marker).exists():
                return f"the vault repository is in the middle of {what}; finish or abort it, then sync again"
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace")
        except OSError:
            head = ""
        if not head.startswith("ref:"):
            return (
                "the vault repository has a detached HEAD (an old commit checked out?); "
                "check out your branch again, then sync"
            )
        return None

    def person(self, name: str, email: str) -> Author:
        """The person's identity: configured, else git's own user, else a fixed fallback (cron has no user)."""
        if name and email:
            return Author(name, email)
        user = self._user()
        git_name = user.get("user.name") or FALLBACK_PERSON[0]
        git_email = user.get("user.email") or FALLBACK_PERSON[1]
        return Author(name or git_name, email or git_email)

    def _user(self) -> dict[str, str]:
        """git's ``user.name`` and ``user.email`` (the last value of each wins, as in git), in one call.

        Asking git itself follows GIT_CONFIG_GLOBAL and include rules; exit 1 means neither is set.
        """
        run = subprocess.run(
            ["git", "config", "-z", "--get-regexp", r"^user\.(name|email)$"],
            cwd=self.root,
            capture_output=True,
            text=True,
        )
        found: dict[str, str] = {}
        for record in run.stdout.split("\0") if run.returncode == 0 else []:
            key, _, value = record.partition("\n")
            if key:
                found[key.lower()] = value.strip()
        return found

    def _git(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return self._git_bytes(*args, stdin=stdin, env=env).decode()

    def _git_bytes(self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
        """Run git in the vault; what passes (a held ``index.lock``, a note mid-save) is waited for, then reported."""
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            started = time.time()
            run = subprocess.run(
                ["git", *args], cwd=self.root, input=stdin, capture_output=True, env={**os.environ, **(env or {})}
            )
            if run.returncode == 0:
                return run.stdout
            stderr = run.stderr.decode(errors="replace")
            if run.returncode < 0:
                # git hashes a large file through mmap and dies of SIGBUS when Obsidian truncates it meanwhile,
                # leaving its index lock. A lock made since this child started is that child's, since git takes
                # its lock with O_EXCL: removing it takes nothing from anyone.
                self._drop_lock_of_dead_child(started, env)
                stderr += f"\ngit died of signal {-run.returncode}; {PASSING[0]}"
            if not any(sign in stderr for sign in PASSING) or time.monotonic() > deadline:
                raise GitFailed(["git", *args], stderr)
            time.sleep(0.2)

    def _drop_lock_of_dead_child(self, started: float, env: dict[str, str] | None) -> None:
        index = Path((env or {}).get("GIT_INDEX_FILE") or self.git_dir / "index")
        lock = index.with_name(index.name + ".lock")
        try:
            if lock.stat().st_mtime >= started - 0.05:  # file times lag the clock by a tick
                lock.unlink()
        except FileNotFoundError:
            pass

    def _head(self) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip() or None
        except GitFailed:
            return None

    def feeds(self, total: int) -> bool:
        """Whether ``feed`` gives a pass about to write ``total`` notes an ``IndexFeed``: not when too few to be
        worth one (the commit then stores them as loose objects, see ``_stage``)."""
        return total >= PACK_PATHS_MIN

    def feed(self, total: int) -> IndexFeed | None:
        """An ``IndexFeed`` for a pass about to write ``total`` notes, when it ``feeds`` them."""
        return IndexFeed(self) if self.feeds(total) else None

    def commit(self, paths: Iterable[str], message: str, author: Author, staged: Collection[str] = ()) -> str | None:
        """Commit exactly ``paths`` (added, changed or deleted); None when none of them changed.

        HEAD moves by compare-and-swap: when obsidian-git commits in between, the commit is rebuilt on top of
        the new HEAD instead of discarding the person's commit. ``staged`` paths are not staged again: the
        caller has just seen the real index hold them as it wants them committed (a first import's feed,
        ``IndexFeed``; at 50k notes, staging them again took 0.37 s). A note changed since is committed as
        the caller saw it, and its change is the next pass's.
        """
        wanted = sorted(set(paths))
        if not wanted:
            return None
        if unstaged := [path for path in wanted if path not in staged]:
            self._stage(unstaged)
        # Many paths: copy what the real index now holds rather than hash every file a second time.
        copy = len(wanted) >= COPY_ENTRIES_MIN
        index = self.git_dir / PRIVATE_INDEX
        ident = {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": author.name,
            "GIT_COMMITTER_EMAIL": author.email,
        }
        # The message goes through standard input: a first import lists thousands of scopes, past the argv limit.
        text = message.encode("utf-8")
        files = self._plain_files(wanted) if len(wanted) <= TREE_EDIT_MAX else None
        for _ in range(HEAD_RETRIES):
            head = self._head()
            edited = self._edited(head, files) if head and files is not None else None
            tree, old_tree = edited or self._indexed(index, head, wanted, copy)
            if tree == old_tree:
                if edited is None:
                    self._mark(index, head, tree)
                return None
            parents = ["-p", head] if head else []
            sha = self._git("commit-tree", tree, *parents, stdin=text, env=ident).strip()
            subject = message.splitlines()[0] if message else ""
            try:
                self._git("update-ref", "-m", f"commit: {subject}", "HEAD", sha, head or ZERO_OID)
            except GitFailed:
                if self._head() == head:
                    raise
                continue  # someone committed meanwhile: build again on their commit
            if edited is None:
                self._mark(index, sha, tree)
            return sha
        raise GitFailed(["git", "update-ref"], "HEAD kept moving while vaultsync committed")

    def _indexed(self, index: Path, head: str | None, wanted: list[str], copy: bool) -> tuple[str, str]:
        """(new tree, ``head``'s tree) built on the private index: ``wanted`` hashed again from disk, or, with
        ``copy``, copied from the real index."""
        private = {"GIT_INDEX_FILE": str(index)}
        old_tree = self._seed(index, head)
        if copy:
            self._git_fed(("update-index", "-z", "--index-info"), self._entries(wanted), env=private)
        else:
            update = ("update-index", "--add", "--remove", "-z", "--stdin")
            self._git(*update, stdin=_nul_list(wanted), env=private)
        tree = self._git("write-tree", env=private).strip()
        if not old_tree and head:
            old_tree = self._git("rev-parse", f"{head}^{{tree}}").strip()
        elif not old_tree:
            old_tree = self._git("hash-object", "-t", "tree", "--stdin", stdin=b"").strip()  # the empty tree
        return tree, old_tree

    def _plain_files(self, wanted: list[str]) -> dict[str, bytes | None] | None:
        """Path -> blob id (stored now) of each path, None for one that is gone; None when one is not a plain
        file (a link, an executable, a folder) or cannot be hashed: the private index handles those."""
        files: dict[str, bytes | None] = {}
        present = []
        for path in wanted:
            try:
                st = os.lstat(self.root / path)
            except FileNotFoundError:
                files[path] = None
                continue
            except OSError:
                return None
            if "\n" in path or not stat.S_ISREG(st.st_mode) or st.st_mode & 0o111:
                return None
            present.append(path)
        if present:
            try:
                ids = self._git("hash-object", "-w", "--stdin-paths", stdin="".join(f"{p}\n" for p in present).encode())
            except GitFailed:
                return None  # gone or changing meanwhile: update-index copes with that
            found = ids.split()
            if len(found) != len(present):
                return None
            files.update(zip(present, map(bytes.fromhex, found), strict=True))
        return files

    def _edited(self, head: str, files: dict[str, bytes | None]) -> tuple[str, str] | None:
        """(new tree, ``head``'s tree) with ``files`` changed, built without an index; None when the private
        index must build it (not a SHA-1 repository, a file becoming a folder, a name git would quote)."""
        if len(head) != 2 * gittree.ID_BYTES:
            return None
        wanted = ["", *[folder for folder in gittree.folders(files) if folder]]
        query = "".join(f"{head}:{folder}\n" if folder else f"{head}^{{tree}}\n" for folder in wanted)
        found = _batch_objects(self._git_bytes("cat-file", "--batch", stdin=query.encode()))
        if len(found) != len(wanted) or found[0] is None:
            return None
        trees: dict[str, gittree.Entries] = {}
        for folder, got in zip(wanted, found, strict=True):
            if got is not None:
                _, kind, body = got
                if kind != b"tree":
                    return None
                trees[folder] = gittree.parse(body)
        old = found[0][0].decode()
        if gittree.object_id(gittree.encode(trees[""])).hex() != old:
            return None  # a tree this module would not write the same way: let git do it
        try:
            root, written = gittree.edit(trees, files)
        except gittree.NotEditable:
            return None
        if root.hex() == old:
            return old, old
        if self._store_trees(written) != [oid.hex() for oid, _ in written]:
            return None  # git disagrees with the trees computed here: let the index build it
        return root.hex(), old

    def _store_trees(self, written: list[tuple[bytes, bytes]]) -> list[str]:
        """Store the trees ``written`` (id, body); the ids git gave them, or [] when it refused.

        ``hash-object -t tree`` checks a tree's format, where ``mktree`` would also look up the type of every
        entry's object: at 50k facts, 976 lookups for the people folder alone, 10-30 ms a commit. The bodies go
        through files named by their ids, so two writers of one name write the same bytes.
        """
        folder = self.git_dir / TREES_DIR
        paths: list[Path] = []
        try:
            folder.mkdir(exist_ok=True)
            for oid, body in written:
                paths.append(folder / oid.hex())
                paths[-1].write_bytes(body)
            listing = "".join(f"{path}\n" for path in paths).encode()
            return self._git("hash-object", "-w", "-t", "tree", "--no-filters", "--stdin-paths", stdin=listing).split()
        except (OSError, GitFailed):
            return []
        finally:
            for path in paths:
                path.unlink(missing_ok=True)

    def _stage(self, wanted: list[str]) -> None:
        """Bring the real index up to date for ``wanted``; a large commit's new blobs go into pack files.

        A first import of 50k notes otherwise writes 50k loose objects: a file and a block of disk each (200 MB
        where packs take 13 MB), the costliest part of the commit on a busy disk, and a backlog that makes the
        person's next ``git commit`` start a long ``gc``. Every blob above ``core.bigFileThreshold`` goes
        through git's bulk check-in, which update-index batches into one pack; the setting holds for these
        commands only, since for the repository it also means "treat as binary in diffs". The paths go in
        chunks of ``PACK_CHUNK``, a pack each: git checks each new blob against every one already in the
        pack being written, which grows with the square of its size (100k blobs in one pack took 20 s, 10k
        took 0.9 s). A few paths stay loose: a pack per hourly pass would pile up packs.
        """
        if len(wanted) < PACK_PATHS_MIN or git_version()[:2] < PACK_GIT_MIN:
            self._git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_nul_list(wanted))
            return
        for start in range(0, len(wanted), PACK_CHUNK):
            self._git(*PACKED_UPDATE, stdin=_nul_list(wanted[start : start + PACK_CHUNK]))

    def unlike(self, expected: Mapping[str, str]) -> set[str]:
        """The paths of ``expected`` (path -> blob id) that git's index does not hold with exactly that blob."""
        differ = set(expected)
        for records in self._listed():
            for record in records:
                tab = record.index(b"\t")
                path = record[tab + 1 :].decode("utf-8", "surrogateescape")  # a name not in UTF-8 is not ours
                if expected.get(path) == record[:tab].split(b" ")[1].decode():
                    differ.discard(path)
        return differ

    def _listed(self) -> Iterator[list[bytes]]:
        """The real index's entries as ``ls-files --stage -z`` prints them (``<mode> <id> <stage>\\t<path>``),
        a list at a time as git prints them: at 200k notes the whole listing is 22 MB, which held at once
        made the commit the peak of a first import's memory."""
        with subprocess.Popen(
            ["git", "ls-files", "--stage", "-z"], cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as listing:
            assert listing.stdout is not None and listing.stderr is not None
            rest = b""
            while chunk := listing.stdout.read(ENTRIES_CHUNK):
                records = (rest + chunk).split(b"\0")
                rest = records.pop()
                yield records
            stderr = listing.stderr.read().decode(errors="replace")
            if listing.wait() != 0:
                raise GitFailed(["git", "ls-files"], stderr)

    def _entries(self, wanted: list[str]) -> Iterator[bytes]:
        """``update-index --index-info`` input giving ``wanted`` as the real index holds them (absent: removed),
        a chunk at a time.

        git lists its index sorted by path bytes, the order of ``sorted`` on UTF-8 text, so one walk over both
        lists does it, as git prints the listing. Paths compare as bytes: a name the person gave that is not
        UTF-8 has no text to compare.
        """
        removed = f"0 {ZERO_OID}\t".encode()
        pending = (path.encode() for path in wanted)
        want = next(pending, None)
        for records in self._listed():
            out = []
            for record in records:
                path = record[record.index(b"\t") + 1 :]
                while want is not None and want < path:
                    out.append(removed + want + b"\0")
                    want = next(pending, None)
                if want == path:
                    out.append(record + b"\0")
                    want = next(pending, None)
            yield b"".join(out)
        last = [] if want is None else [want]
        yield b"".join(removed + path + b"\0" for path in [*last, *pending])

    def _git_fed(self, args: tuple[str, ...], chunks: Iterable[bytes], env: dict[str, str]) -> None:
        """Run git with ``chunks`` on its standard input as they come. When the chunks stop short (they
        raised), git is killed rather than left to take what it was given for all of it."""
        with subprocess.Popen(
            ["git", *args],
            cwd=self.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        ) as git:
            assert git.stdin is not None and git.stderr is not None
            try:
                for chunk in chunks:
                    git.stdin.write(chunk)
                git.stdin.close()
            except BrokenPipeError:  # git stopped reading: its message says why
                pass
            except BaseException:
                git.kill()
                raise
            stderr = git.stderr.read().decode(errors="replace")
            if git.wait() != 0:
                raise GitFailed(["git", *args], stderr)

    def _seed(self, index: Path, head: str | None) -> str:
        """Make the private index hold ``head``'s tree, reusing it when the last commit left it so; returns
        that tree's id when the reused index's marker knows it, else "".

        The ``.head`` marker (``<commit> <tree>``) is removed before the index is touched and written back only
        once a commit (or a finding that there is nothing to commit) leaves index and HEAD equal again, so a
        killed pass can never leave half-staged paths to leak into the next commit. Only vaultsync writes this
        index, under the run lock: a lock file beside it is a killed pass's and is removed.
        """
        marker = index.with_name(index.name + ".head")
        known, _, tree = (marker.read_text().strip() if marker.exists() else "").partition(" ")
        marker.unlink(missing_ok=True)
        index.with_name(index.name + ".lock").unlink(missing_ok=True)
        if head and known == head and index.exists():
            return tree
        self._git("read-tree", *([head] if head else ["--empty"]), env={"GIT_INDEX_FILE": str(index)})
        return ""

    @staticmethod
    def _mark(index: Path, head: str | None, tree: str) -> None:
        if head:
            index.with_name(index.name + ".head").write_text(f"{head} {tree}\n", encoding="utf-8")


class IndexFeed:
    """Takes a first import's notes into git while the import writes the rest, on the other core.

    Their bytes, as the import wrote them, go to one running ``git fast-import`` (``FAST_IMPORT``), every
    blob deflated once at zlib's fastest level and without a delta search. Every ``PACK_CHUNK`` notes it is
    told to finish its pack (a ``checkpoint``), and once it has, one ``update-index`` stages those notes'
    paths in the real index, a read and a hash each, the blobs being there already; the last notes are
    staged when the import is done with the feed. Streaming the same notes through update-index's bulk
    check-in instead read every file back and checked each new blob against every one already in its pack:
    at 50k notes 4.4 s of git's time, against 1.6 s this way.

    A warm-up: the commit stages again whatever this feed did not leave staged as the import wrote it. So
    whatever goes wrong here (git refusing, a note changing after it was written, a path gone) only means the
    commit does that work itself, and reports it if it fails too. A thread of its own talks to git, so that
    the import never waits for it. Callers feed only notes they checked for secrets: the real index is what
    the person's own ``git commit`` takes.
    """

    def __init__(self, repo: VaultRepo) -> None:
        # Imported here: concurrent.futures brings logging and traceback (about 15 ms), which only a large
        # first import needs, not the hourly pass that commits a few notes.
        from concurrent.futures import ThreadPoolExecutor

        self.repo = repo
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultsync-index")
        self._git: subprocess.Popen[bytes] | None = None
        self._paths: list[str] = []  # fed since the last checkpoint
        self._broken = False

    def add(self, paths: list[str], blobs: bytes) -> None:
        """Queue notes for git; returns at once. ``blobs`` holds their bytes as ``fast_import_blobs`` puts
        them, ``paths`` where they were written."""
        if paths:
            self._sender.submit(self._send, paths, blobs)

    def __enter__(self) -> IndexFeed:
        return self

    def __exit__(self, *_: object) -> None:
        """Wait for git to have stored and staged every note fed so far."""
        self._sender.submit(self._finish)
        self._sender.shutdown(wait=True)

    def _send(self, paths: list[str], blobs: bytes) -> None:
        if self._broken:
            return
        if self._git is None:
            self._git = subprocess.Popen(
                ["git", *FAST_IMPORT],
                cwd=self.repo.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # what went wrong here, the commit meets again and reports
            )
        assert self._git.stdin is not None and self._git.stdout is not None
        self._paths += paths
        try:
            self._git.stdin.write(blobs)
            if len(self._paths) >= PACK_CHUNK:
                self._git.stdin.write(b"checkpoint\nprogress stored\n")
                self._git.stdin.flush()
                if self._git.stdout.readline() != b"progress stored\n":
                    raise OSError("git fast-import stopped")
                self._stage()
        except OSError:  # git stopped reading: it failed, and the commit stages these itself
            self._broken = True

    def _finish(self) -> None:
        if self._git is None:
            return
        assert self._git.stdin is not None
        with contextlib.suppress(OSError):
            self._git.stdin.close()
        if self._git.wait() == 0 and not self._broken:
            self._stage()

    def _stage(self) -> None:
        with contextlib.suppress(GitFailed):
            self.repo._git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_nul_list(self._paths))
        self._paths = []


def fast_import_blobs(blobs: Iterable[bytes]) -> bytes:
    """``blobs`` as ``git fast-import`` reads them: a ``blob`` command each, without a mark."""
    return b"".join(b"blob\ndata %d\n%b\n" % (len(blob), blob) for blob in blobs)


def _nul_list(paths: list[str]) -> bytes:
    return "".join(f"{path}\0" for path in paths).encode()


def _batch_objects(out: bytes) -> list[tuple[bytes, bytes, bytes] | None]:
    """(id, type, content) of each object ``git cat-file --batch`` printed, in order; None for one not found."""
    found: list[tuple[bytes, bytes, bytes] | None] = []
    i = 0
    while i < len(out):
        end = out.index(b"\n", i)
        header = out[i:end]
        if header.endswith(b" missing") or header.endswith(b" ambiguous"):
            found.append(None)
            i = end + 1
            continue
        oid, kind, size = header.rsplit(b" ", 2)
        start = end + 1
        found.append((oid, kind, out[start : start + int(size)]))
        i = start + int(size) + 1
    return found
