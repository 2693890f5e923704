"""A first import's notes taken into git while the import writes the rest (``IndexFeed``)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterable

from vaultsync.git.run import Git, GitFailed, nul_list

# Notes to a pack: those a first import's ``IndexFeed`` stores, and the new blobs of a large commit
# (``VaultRepo``), each pack checked by git against every blob already in it.
PACK_CHUNK = 20_000
# A first import's notes, stored in one pack as they are written (``IndexFeed``): deflated at zlib's fastest
# level, no delta search (git's own ``gc`` finds the deltas later): about half git's time of its defaults for a
# slightly larger pack (the first-import benchmark of benchmarks/run.py; figures in benchmarks/history.md).
FAST_IMPORT = ("-c", "pack.compression=1", "fast-import", "--quiet", "--depth=0")


class IndexFeed:
    """Takes a first import's notes into git while the import writes the rest, on the other core.

    Their bytes, as the import wrote them, go to one running ``git fast-import`` (``FAST_IMPORT``), every
    blob deflated once at zlib's fastest level and without a delta search. Every ``PACK_CHUNK`` notes it is
    told to finish its pack (a ``checkpoint``), and once it has, one ``update-index`` stages those notes'
    paths in the real index, a read and a hash each, the blobs being there already; the last notes are
    staged when the import is done with the feed. Streaming the same notes through update-index's bulk
    check-in instead read every file back and checked each new blob against every one already in its pack,
    almost three times git's time this way (benchmarks/history.md).

    A warm-up: the commit stages again whatever this feed did not leave staged as the import wrote it. So
    whatever goes wrong here (git refusing, a note changing after it was written, a path gone) only means the
    commit does that work itself, and reports it if it fails too. A thread of its own talks to git, so that
    the import never waits for it. Callers feed only notes they checked for secrets: the real index is what
    the person's own ``git commit`` takes.
    """

    def __init__(self, git: Git) -> None:
        # Imported here: concurrent.futures brings logging and traceback (about 15 ms), which only a large
        # first import needs, not the hourly pass that commits a few notes.
        from concurrent.futures import ThreadPoolExecutor

        self.git = git
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultsync-index")
        self._process: subprocess.Popen[bytes] | None = None
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
        if self._process is None:
            self._process = subprocess.Popen(
                ["git", *FAST_IMPORT],
                cwd=self.git.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # what went wrong here, the commit meets again and reports
            )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._paths += paths
        try:
            self._process.stdin.write(blobs)
            if len(self._paths) >= PACK_CHUNK:
                self._process.stdin.write(b"checkpoint\nprogress stored\n")
                self._process.stdin.flush()
                if self._process.stdout.readline() != b"progress stored\n":
                    raise OSError("git fast-import stopped")
                self._stage()
        except OSError:  # git stopped reading: it failed, and the commit stages these itself
            self._broken = True

    def _finish(self) -> None:
        if self._process is None:
            return
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.close()
        if self._process.wait() == 0 and not self._broken:
            self._stage()

    def _stage(self) -> None:
        with contextlib.suppress(GitFailed):
            self.git.text("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_list(self._paths))
        self._paths = []


def fast_import_blobs(blobs: Iterable[bytes]) -> bytes:
    """``blobs`` as ``git fast-import`` reads them: a ``blob`` command each, without a mark."""
    return b"".join(b"blob\ndata %d\n%b\n" % (len(blob), blob) for blob in blobs)
