"""A pass with a git remote: fetch, bring the remote's commits in, run the pass, push; all under the run lock.

The remote's new commits are the person's edits from other devices (obsidian-git on a laptop). They are merged
into the vault before the pass scans it, so the pass carries them into the memory tree like any hand edit,
and the person's commits keep their own authors. The merge is made without touching the work tree
(``git/remote.py``); both sides' changes to the same file are resolved the way a pass resolves a clash: this
vault's version (the agent's) stays in the note and the remote's is kept beside it as a conflict copy, so the
next pass and the next push are clean. Only then does HEAD move, with a journal in the state folder, and
the work tree follows (``git/worktree.py``).

Pushing never forces. A push the remote refuses because it moved meanwhile is fetched, merged and tried
again, a few times; one it refuses for a reason of its own (a hook, a protected branch) waits at once, with
that reason. A remote that cannot be reached leaves the local pass done and committed; the push
waits for a later pass and the run exits ``NOT_PUSHED``. Before every push the secret guard reads what is
about to leave, including commits other tools made: a secret holds the whole push back.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime
from pathlib import PurePosixPath

from vaultsync.config import Config
from vaultsync.core.merge import merge_files
from vaultsync.errors import FileChanged, NotARepository, PushRefused
from vaultsync.git.remote import Remote, Unreachable
from vaultsync.git.repo import VaultRepo
from vaultsync.git.run import GitFailed
from vaultsync.git.secrets import scan_bytes
from vaultsync.git.worktree import follow
from vaultsync.model import AGENT, Conflict, Problem, RemoteState, Report, Severity
from vaultsync.options import PassOptions
from vaultsync.state import push_record as record
from vaultsync.state.files import StateFiles
from vaultsync.system.fs import atomic_write, read_or_none
from vaultsync.vault.layout import CONFLICT_MARK, conflict_copy_name

PUSH_TRIES = 3  # a remote that moves again after three fetch-and-merge rounds is busier than a person
HEAD_TRIES = 5
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_OID = "0" * 40
INDEX_BUSY = (
    "the remote's commits are in HEAD, but git's index was busy while the work tree followed; "
    "nothing else was written; sync again when no other git runs"
)


class RemoteRound:
    """What a change with a ``[remote]`` does before and after itself, under the lock (``app/write.py``)."""

    def __init__(self, cfg: Config, options: PassOptions) -> None:
        assert cfg.remote is not None
        self.cfg = cfg
        self.options = options
        self.files = StateFiles(cfg.state_dir)
        self.state = RemoteState(f"{cfg.remote.name}/{cfg.remote.branch}")
        self.remote: Remote | None = None
        self.found = Report()  # conflicts, problems and merge commits of the round, added to the pass's report
        self.unreached = ""

    # -- before the pass ------------------------------------------------------------------------------------
    def before(self) -> str | None:
        """Finish an interrupted merge, fetch, bring the remote's commits in; a reason to stop, or None."""
        try:
            repo = VaultRepo(self.cfg.vault)
        except NotARepository:
            return None  # the pass stops and says why
        if repo.busy():
            return None
        assert self.cfg.remote is not None
        self.remote = Remote(repo.git, self.cfg.remote.name, self.cfg.remote.branch)
        if self.options.dry_run:
            return None  # a look writes nothing and reaches no network: it reports what the last fetch saw
        try:
            self._finish()
        except GitFailed:
            return INDEX_BUSY
        try:
            theirs = self.remote.fetch()
        except (Unreachable, GitFailed) as exc:
            self.unreached = str(exc)
            return None
        self.state.fetched = True
        return self._integrate(theirs)

    def _head(self) -> str | None:
        assert self.remote is not None
        try:
            return self.remote.git.text("rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip() or None
        except GitFailed:
            return None

    def _finish(self) -> None:
        """A merge a killed pass left half-done: HEAD moved, the work tree may not have followed."""
        assert self.remote is not None
        entry = record.journal(self.files)
        if entry is None:
            return
        head = self._head()
        if head == entry.new:
            self._follow(entry.old, entry.new)
        record.merge_done(self.files)  # HEAD never moved (still old), or moved on since: nothing to finish

    def _integrate(self, theirs: str | None) -> str | None:
        """Bring ``theirs`` into HEAD and the work tree; a reason to stop the pass, or None."""
        remote = self.remote
        assert remote is not None
        if theirs is None:
            return None  # the branch is not on the remote yet: the push creates it
        for _ in range(HEAD_TRIES):
            head = self._head()
            if head is not None and remote.contains(theirs, head):
                return None  # nothing new there
            if head is None or remote.contains(head, theirs):
                new = theirs  # a fast-forward: the person's commits, as they made them
            else:
                try:
                    new = self._merge(head, theirs)
                except GitFailed as exc:
                    self.unreached = f"could not merge {remote.label}: {exc.stderr.strip()}"
                    return None
            record.begin_merge(self.files, record.Journal(head or EMPTY_TREE, new))
            if not remote.move_head(new, head or ZERO_OID):
                record.merge_done(self.files)
                continue  # a commit landed meanwhile (obsidian-git on this machine): merge again on top of it
            self.state.integrated.append(new)
            try:
                self._follow(head or EMPTY_TREE, new)
            except GitFailed:
                return INDEX_BUSY
            record.merge_done(self.files)
            return None
        self.unreached = "HEAD kept moving while the remote's commits were merged"
        return None

    def _merge(self, head: str, theirs: str) -> str:
        """A merge commit of HEAD and the remote, clashes resolved: HEAD's version in the file, the remote's in
        a conflict copy beside it (or the surviving version, when one side deleted the file)."""
        remote = self.remote
        assert remote is not None
        merged = remote.merge_tree(head, theirs)
        stamp = self.options.now().strftime("%Y%m%d-%H%M%S")
        entries: dict[str, tuple[str, str] | None] = {}
        copies = []
        for clash in merged.clashes:
            entries[clash.path] = clash.ours or clash.theirs
            if clash.ours and clash.theirs and clash.ours != clash.theirs:
                copy = copy_name(clash.path, stamp)
                entries[copy] = clash.theirs
                copies.append(copy)
                self.found.conflicts.append(
                    Conflict(
                        f"git:{clash.path}",
                        clash.path,
                        f"changed here and on {remote.label} since they last met",
                        copy,
                    )
                )
        tree = remote.resolved(merged.tree, entries) if entries else merged.tree
        message = f"vaultsync: merge {remote.label}"
        if copies:
            message += "\n\nChanged on both sides; this vault's version kept, the remote's in:\n"
            message += "".join(f"  {copy}\n" for copy in copies)
        sha = remote.commit_merge(tree, [head, theirs], message, VaultRepo(self.cfg.vault).author(AGENT, self.cfg.git))
        self.found.commits.append(sha)
        return sha

    def _follow(self, old: str, new: str) -> None:
        """The work tree and index after HEAD moved; a file changed here meanwhile gets the remote's change merged
        line-wise into it, or, when the two touch the same lines, keeps its content, and the remote's version of
        it is kept beside it as a conflict copy.

        A note held out of git for a secret is such a file: it holds this machine's later writes uncommitted, so
        the person removing the secret on another device must merge into it, not clash with it."""
        assert self.remote is not None
        layout = self.cfg.layout
        keep = [self.cfg.vault / folder for folder in (*layout.para_folders().values(), layout.daily)]
        followed = follow(self.remote.git, old, new, keep)
        stamp = self.options.now().strftime("%Y%m%d-%H%M%S")
        copies = []
        for path, data in followed.kept.items():
            if self._merged(path, followed.bases.get(path), data):
                continue
            copy = copy_name(path, stamp)
            try:
                atomic_write(self.cfg.vault / copy, data, None)
            except (FileChanged, OSError):
                continue  # a copy of that name is already there: a resumed update wrote it
            copies.append(copy)
            self.found.conflicts.append(
                Conflict(f"git:{path}", path, f"edited here while {self.remote.label} changed it", copy)
            )
        if copies:  # committed, so that the push carries them to the device whose version they hold
            message = f"vaultsync: keep {self.remote.label}'s version of files edited here meanwhile"
            repo = VaultRepo(self.cfg.vault)
            sha = repo.commit(copies, message, repo.author(AGENT, self.cfg.git))
            if sha:
                self.found.commits.append(sha)

    def _merged(self, path: str, base: bytes | None, incoming: bytes) -> bool:
        """Whether the remote's change to ``path`` merged cleanly into the version on disk, written in its place."""
        target = self.cfg.vault / path
        disk = read_or_none(target)
        if base is None or disk is None:
            return False
        merged, clash = merge_files(base, disk, incoming)
        if clash:
            return False
        try:
            if merged != disk:
                atomic_write(target, merged, disk)
        except (FileChanged, OSError):
            return False
        return True

    # -- after the pass -------------------------------------------------------------------------------------
    def after(self, report: Report) -> None:
        """Push what the pass committed (unless it stopped), and say where the vault stands with the remote."""
        if self.remote is not None and not self.options.dry_run and not report.stopped:
            if self.unreached:
                self._wait(self.unreached)
            else:
                try:
                    self._push(report)
                except (GitFailed, Unreachable, PushRefused) as exc:  # a refusal is final: no fetch round
                    self._wait(str(exc))
        report.conflicts[:0] = self.found.conflicts
        report.problems[:0] = self.found.problems
        report.commits[:0] = self.found.commits
        report.remote = self.state
        if self.remote is None:
            return
        waiting = record.waiting(self.files)
        if waiting:
            self.state.waiting_since, self.state.why = waiting.since, waiting.why
        with suppress(GitFailed):  # a ref git cannot read: the counts stay unknown (0), the pass itself is done
            self.state.ahead, self.state.behind = self.remote.counts(self._head())

    def _push(self, report: Report) -> None:
        remote = self.remote
        assert remote is not None
        for _ in range(PUSH_TRIES):
            head = self._head()
            theirs = remote.fetched()
            if head is None or (theirs is not None and remote.contains(head, theirs)):
                record.pushed(self.files)
                return  # nothing the remote lacks
            if self._secret_held(report, head):
                return
            pushed = remote.push(head)
            if pushed.ok:
                self.state.pushed = True
                record.pushed(self.files)
                return
            if not pushed.rejected:
                self._wait(pushed.why)
                return
            try:  # the remote moved since the fetch: bring its commits in and try again
                theirs = remote.fetch()
            except (Unreachable, GitFailed) as exc:
                self._wait(str(exc))
                return
            if self._integrate(theirs) or self.unreached:
                self._wait(self.unreached or INDEX_BUSY)
                return
        self._wait(f"{remote.label} kept moving: it had new commits at each of {PUSH_TRIES} pushes")

    def _secret_held(self, report: Report, head: str) -> bool:
        """Scan what is about to be pushed: nothing the secret guard would refuse to commit leaves the machine."""
        assert self.remote is not None
        for path, data in self.remote.unpushed_blobs(head):
            findings = scan_bytes(data)
            if findings:
                where = ", ".join(f"line {f.line}: {f.kind} {f.redacted}" for f in findings[:3])
                report.problems.append(
                    Problem(
                        path,
                        f"a commit not yet pushed holds a secret ({where}); a secret held the push back: take it out "
                        "of those commits (docs/remote.md: A secret held the push back), then sync",
                        Severity.WARNING,
                    )
                )
                self._wait(f"a secret held the push back ({path})")
                return True
        return False

    def _wait(self, why: str) -> None:
        since = datetime.now().astimezone().isoformat(timespec="seconds")
        record.record_waiting(self.files, since, why)


def copy_name(path: str, stamp: str) -> str:
    """Where the remote's version of a clashing file is kept: a note's conflict copy as a pass names it, any
    other file with the same mark before its own suffix."""
    if path.endswith(".md"):
        return conflict_copy_name(path, stamp)
    pure = PurePosixPath(path)
    return str(pure.with_name(f"{pure.stem}{CONFLICT_MARK}{stamp}{pure.suffix}"))
