"""The vault's git repository: commits with honest authors that stage exactly the paths a pass changed.

Staging goes through git's own CLI (``--pathspec-from-file``) rather than GitPython's pure-Python index, which
is many times slower on large vaults. Pathspecs are literal, so a note named ``[draft]*.md`` is one file, not a
glob. Commits use ``--only`` semantics: whatever else the person or obsidian-git staged stays staged and out of
vaultsync's commits.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import git

FALLBACK_PERSON = ("vault person", "person@vaultsync.invalid")
LOCK_WAIT_SECONDS = 10.0
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


class RepoBusy(RuntimeError):
    """The repo is mid-merge, rebase or similar: committing now could tangle a person's work."""


@dataclass(frozen=True)
class Author:
    name: str
    email: str


def ensure_repo(root: Path) -> bool:
    """Create a repository at ``root`` unless one is there; True when one was created."""
    try:
        git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        git.Repo.init(root, initial_branch="main")
        return True
    return False


class VaultRepo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git.Repo(root)

    def busy(self) -> str | None:
        git_dir = Path(self.repo.git_dir)
        for marker, what in (
            ("MERGE_HEAD", "a merge"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or am"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
        ):
            if (git_dir / marker).exists():
                return f"the vault repository is in the middle of {what}; finish or abort it, then sync again"
        return None

    def person(self, name: str, email: str) -> Author:
        """The person's identity: configured, else git's own user, else a fixed fallback (cron has no user)."""
        if name and email:
            return Author(name, email)
        git_name = self._config("user.name") or FALLBACK_PERSON[0]
        git_email = self._config("user.email") or FALLBACK_PERSON[1]
        return Author(name or git_name, email or git_email)

    def _config(self, key: str) -> str:
        # Ask git itself: GitPython's reader ignores GIT_CONFIG_GLOBAL and include rules.
        try:
            return str(self.repo.git.config("--get", key)).strip()
        except git.GitCommandError:
            return ""

    def _run(self, *args: str, author: Author | None = None, pathspec: Path | None = None) -> str:
        env = dict(LITERAL)
        if author:
            env |= {
                "GIT_AUTHOR_NAME": author.name,
                "GIT_AUTHOR_EMAIL": author.email,
                "GIT_COMMITTER_NAME": author.name,
                "GIT_COMMITTER_EMAIL": author.email,
            }
        extra = [f"--pathspec-from-file={pathspec}", "--pathspec-file-nul"] if pathspec else []
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                return str(self.repo.git.execute(["git", *args, *extra], env=env))
            except git.GitCommandError as exc:
                # obsidian-git may hold index.lock for a moment: wait for it rather than fail the pass.
                if "index.lock" not in str(exc.stderr) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def commit(self, paths: Iterable[str], message: str, author: Author) -> str | None:
        """Commit exactly ``paths`` (added, changed or deleted); None when none of them changed."""
        wanted = sorted(set(paths))
        if not wanted:
            return None
        with tempfile.TemporaryDirectory(prefix="vaultsync-git-") as tmp:
            spec = Path(tmp) / "paths"
            spec.write_bytes(b"\0".join(p.encode() for p in wanted))
            # ls-files and diff take no pathspec file: list everything and intersect instead.
            tracked = set(self._run("ls-files", "-z").split("\0"))
            present = [p for p in wanted if (self.root / p).exists() or p in tracked]
            if not present:
                return None
            spec.write_bytes(b"\0".join(p.encode() for p in present))
            self._run("add", "-A", pathspec=spec)
            against = ["HEAD"] if self.repo.head.is_valid() else []
            staged = set(self._run("diff", "--cached", "--name-only", "--no-renames", "-z", *against).split("\0"))
            if not staged.intersection(present):
                return None
            # The message goes through a file: a first import lists thousands of scopes, past the argv limit.
            msg = Path(tmp) / "message"
            msg.write_text(message, encoding="utf-8")
            self._run("commit", "--no-verify", "--quiet", "-F", str(msg), author=author, pathspec=spec)
        return self.repo.head.commit.hexsha
