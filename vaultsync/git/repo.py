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
import subprocess
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

from vaultsync.config import GitSettings
from vaultsync.git import feed, tree_edit
from vaultsync.git.feed import IndexFeed
from vaultsync.git.index import blob_id
from vaultsync.git.run import (
    CLIENT_PREFIX,
    Author,
    Git,
    GitFailed,
    git_dir,
    git_version,
    nul_list,
)
from vaultsync.model import Actor

FALLBACK_PERSON = ("vault person", "person@vaultsync.invalid")
# From this many paths, new blobs are streamed into packs instead of a loose file each, ``feed.PACK_CHUNK`` to a
# pack. git >= 2.37 batches update-index's objects this way; older ones would make a pack per blob, so they keep
# loose objects.
PACK_PATHS_MIN = 500
PACK_GIT_MIN = (2, 37)
PRIVATE_INDEX = "vaultsync-index"
HEAD_RETRIES = 5
COPY_ENTRIES_MIN = 500
ENTRIES_CHUNK = 1 << 20  # bytes of the index listing read at a time
# update-index reading paths from standard input, every new blob through bulk check-in into one pack
PACKED_UPDATE = ("-c", "core.bigFileThreshold=1", "update-index", "--add", "--remove", "-z", "--stdin")
ZERO_OID = "0" * 40
MODIFIED_NAMED_MAX = 100  # ``modified`` names this many paths to git; more are filtered from its whole listing


class VaultRepo:
    """The vault's repository, driven through git's command line.

    Every operation here is git plumbing with a private index, standard input or a compare-and-swap, which
    GitPython would only pass through to the same commands, and importing it is a noticeable share of a cold
    pass (benchmarks/history.md).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = git_dir(root)
        self.git = Git(root, self.git_dir)

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

    def author(self, actor: Actor, settings: GitSettings) -> Author:
        """The commit author for ``actor``, built here only; an API client under the agent's address."""
        if actor.kind == "person":
            return self.person(settings.person_name, settings.person_email)
        if actor.kind == "client":
            return Author(f"{CLIENT_PREFIX}{actor.client})", settings.agent_email)
        return Author(settings.agent_name, settings.agent_email)

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

    def _head(self) -> str | None:
        try:
            return self.git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip() or None
        except GitFailed:
            return None

    def feeds(self, total: int) -> bool:
        """Whether ``feed`` gives a pass about to write ``total`` notes an ``IndexFeed``: not when too few to be
        worth one (the commit then stores them as loose objects, see ``_stage``)."""
        return total >= PACK_PATHS_MIN

    def feed(self, total: int) -> IndexFeed | None:
        """An ``IndexFeed`` for a pass about to write ``total`` notes, when it ``feeds`` them."""
        return IndexFeed(self.git) if self.feeds(total) else None

    def commit(self, paths: Iterable[str], message: str, author: Author, staged: Collection[str] = ()) -> str | None:
        """Commit exactly ``paths`` (added, changed or deleted); None when none of them changed.

        HEAD moves by compare-and-swap: when obsidian-git commits in between, the commit is rebuilt on top of
        the new HEAD instead of discarding the person's commit. ``staged`` paths are not staged again: the
        caller has just seen the real index hold them as it wants them committed (a first import's feed,
        ``IndexFeed``; staging them again was a measurable part of the import, see benchmarks/history.md). A
        note changed since is committed as
        the caller saw it, and its change is the next pass's.
        """
        wanted = sorted(set(paths))
        if not wanted:
            return None
        try:
            if unstaged := [path for path in wanted if path not in staged]:
                self._stage(unstaged)
            return self._commit_staged(wanted, message, author)
        except GitFailed:
            self._unstage(wanted)
            raise

    def _unstage(self, paths: list[str]) -> None:
        """Put the real index's entries for ``paths`` back to HEAD's, as ``git restore --staged`` does.

        A commit that failed (a lock file a killed git left, a full disk) must not leave the person's next
        ``git commit`` holding notes vaultsync staged for its own; the files themselves are untouched and the next
        pass commits them. When git cannot even do this (the index itself is locked), nothing was staged either.
        """
        literal = {"GIT_LITERAL_PATHSPECS": "1"}
        with contextlib.suppress(GitFailed):
            if self._head():
                self.git.text(
                    "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=nul_list(paths), env=literal
                )
            else:
                self.git.text(
                    "rm",
                    "--cached",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    stdin=nul_list(paths),
                    env=literal,
                )

    def _commit_staged(self, wanted: list[str], message: str, author: Author) -> str | None:
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
        files = tree_edit.plain_files(self.git, wanted) if len(wanted) <= tree_edit.TREE_EDIT_MAX else None
        for _ in range(HEAD_RETRIES):
            head = self._head()
            edited = tree_edit.edited_tree(self.git, head, files) if head and files is not None else None
            tree, old_tree = edited or self._indexed(index, head, wanted, copy)
            if tree == old_tree:
                if edited is None:
                    self._mark(index, head, tree)
                return None
            parents = ["-p", head] if head else []
            sha = self.git.text("commit-tree", tree, *parents, stdin=text, env=ident).strip()
            subject = message.splitlines()[0] if message else ""
            try:
                self.git.text("update-ref", "-m", f"commit: {subject}", "HEAD", sha, head or ZERO_OID)
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
            self.git.fed(("update-index", "-z", "--index-info"), self._entries(wanted), env=private)
        else:
            update = ("update-index", "--add", "--remove", "-z", "--stdin")
            self.git.text(*update, stdin=nul_list(wanted), env=private)
        tree = self.git.text("write-tree", env=private).strip()
        if not old_tree and head:
            old_tree = self.git.text("rev-parse", f"{head}^{{tree}}").strip()
        elif not old_tree:
            old_tree = self.git.text("hash-object", "-t", "tree", "--stdin", stdin=b"").strip()  # the empty tree
        return tree, old_tree

    def _stage(self, wanted: list[str]) -> None:
        """Bring the real index up to date for ``wanted``; a large commit's new blobs go into pack files.

        A first import of 50k notes otherwise writes 50k loose objects: a file and a block of disk each (200 MB
        where packs take 13 MB), the costliest part of the commit on a busy disk, and a backlog that makes the
        person's next ``git commit`` start a long ``gc``. Every blob above ``core.bigFileThreshold`` goes
        through git's bulk check-in, which update-index batches into one pack; the setting holds for these
        commands only, since for the repository it also means "treat as binary in diffs". The paths go in
        chunks of ``feed.PACK_CHUNK``, a pack each: git checks each new blob against every one already in the
        pack being written, which grows with the square of its size (figures in benchmarks/history.md). A few
        paths stay loose: a pack per hourly pass would pile up packs.
        """
        if len(wanted) < PACK_PATHS_MIN or git_version()[:2] < PACK_GIT_MIN:
            self.git.text("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_list(wanted))
            return
        for start in range(0, len(wanted), feed.PACK_CHUNK):
            self.git.text(*PACKED_UPDATE, stdin=nul_list(wanted[start : start + feed.PACK_CHUNK]))

    def modified(self, paths: Collection[str]) -> dict[str, str]:
        """Those of ``paths`` that git tracks and whose file differs from what the real index holds, each with
        the blob id of the file as read here.

        ``diff-files`` goes by the index's stat data, so a file merely touched is listed too; each one listed is
        then hashed and compared with its index entry, so only a real difference of bytes remains. A few paths
        are given to git by name; more are filtered here from what it lists, which costs a stat per tracked file.
        """
        wanted = set(paths)
        listed = self.touched(wanted if len(wanted) <= MODIFIED_NAMED_MAX else ()) & wanted if wanted else set()
        on_disk: dict[str, str] = {}
        for path in listed:
            try:
                on_disk[path] = blob_id((self.root / path).read_bytes())
            except OSError:
                continue  # gone or unreadable meanwhile: nothing to commit for it now
        return {path: on_disk[path] for path in self.unlike(on_disk)} if on_disk else {}

    def untracked(self) -> set[str]:
        """Files git does not track and does not ignore: what a vault held before it had a repository."""
        out = self.git.bytes("ls-files", "-z", "--others", "--exclude-standard")
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}

    def touched(self, paths: Collection[str] = ()) -> set[str]:
        """Tracked files (of ``paths``, or all) whose stat data differs from the real index's: a superset of those
        changed, found without reading a file."""
        named = [f":(literal){p}" for p in sorted(paths)]
        out = self.git.bytes("diff-files", "--name-only", "-z", "--", *named)
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}

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
        self.git.text("read-tree", *([head] if head else ["--empty"]), env={"GIT_INDEX_FILE": str(index)})
        return ""

    @staticmethod
    def _mark(index: Path, head: str | None, tree: str) -> None:
        if head:
            index.with_name(index.name + ".head").write_text(f"{head} {tree}\n", encoding="utf-8")
