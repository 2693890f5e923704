"""The watch use case: run a pass shortly after files under the three roots change, until told to stop.

Watching is not a second engine: each batch of changes starts the same pass ``vaultsync sync`` runs, whose
quick check and scoped pass already make a pass after one saved note cost what the small-change pass costs.
What this module adds is when to run: after a quiet period, with a cap so a steady trickle of agent writes
still syncs; never for files that cannot matter or that the pass itself just wrote; not while a root is missing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from vaultsync.app.sync import LockHeld, PassOptions, sync
from vaultsync.config import STATE_DIRNAME, Config
from vaultsync.model import Report

QUIET_MS = 300  # a pass starts once no change has come for this long...
CAP_MS = 3000  # ...or this long after the first change of a burst, whichever comes first
ROOT_CHECK_MS = 1000  # how often a quiet watcher looks whether a root went away
LOCK_RETRY_S = 0.5
SWAP_SUFFIXES = (".vstmp", ".swp", ".swx", ".tmp", "~")
Signature = tuple[int, int, int] | None  # (inode, size, mtime_ns), None for a file that is not there


def ignored(path: str) -> bool:
    """Changes that cannot matter to a pass: git's and vaultsync's own folders, Obsidian's window layout
    (``workspace.json``, ``workspace-mobile.json``), and editors' swap and temporary files."""
    parts = Path(path).parts
    if ".git" in parts or STATE_DIRNAME in parts:
        return True
    name = parts[-1] if parts else ""
    if name.startswith("workspace") and name.endswith(".json") and ".obsidian" in parts:
        return True
    return name.endswith(SWAP_SUFFIXES) or (name.startswith(".#") or name.startswith("~$"))


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def written_paths(cfg: Config, report: Report) -> list[Path]:
    """The files a pass wrote, deleted or moved, from its actions; those it left for the next pass excepted."""
    left = {problem.path for problem in report.problems}
    roots = {"workspace": cfg.workspace, "life": cfg.life}
    out = []
    for action in report.actions:
        side, _, rest = action.partition(": ")
        shown = rest.partition(" ")[2]
        for one in shown.split(" -> "):
            if one in left:
                continue
            if side == "vault":
                out.append(cfg.vault / one)
            else:
                label, _, rel = one.partition("/")
                out.append(roots[label] / rel if label in roots else Path(one))
    return out


@dataclass
class OwnWrites:
    """What the last pass left on disk, so the change events of its own writes do not start another pass.

    An event is the pass's own when its path is one the pass wrote and the file is still exactly as the pass
    left it; a file written again since (by the agent, by Obsidian) has another signature and counts.
    """

    left: dict[str, Signature]

    @classmethod
    def after(cls, cfg: Config, report: Report) -> OwnWrites:
        return cls({str(path): _signature(path) for path in written_paths(cfg, report)})

    def foreign(self, paths: Iterable[str]) -> list[str]:
        return [p for p in paths if p not in self.left or _signature(Path(p)) != self.left[p]]


def _roots(cfg: Config) -> list[Path]:
    return [cfg.workspace, cfg.life, cfg.vault]


def _identity(cfg: Config) -> list[tuple[int, int] | None]:
    """Each root's device and inode: a folder re-created under the same name is another folder to watch."""
    out: list[tuple[int, int] | None] = []
    for root in _roots(cfg):
        try:
            st = os.stat(root)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino) if os.path.isdir(root) else None)
    return out


def watch(
    cfg: Config,
    on_pass: Callable[[Report], None],
    on_note: Callable[[str], None],
    stop: threading.Event,
    quiet_ms: int = QUIET_MS,
    cap_ms: int = CAP_MS,
) -> None:
    """Watch until ``stop`` is set: one pass once watching has begun, then one after each settled batch of changes.

    A pass that has started runs to its end (``stop`` is only looked at between passes), so stopping never
    leaves a half-applied pass; a pass waiting for the lock gives up when ``stop`` is set.
    """
    from watchfiles import watch as watch_changes

    def wait() -> bool:
        return not stop.wait(LOCK_RETRY_S)

    def run() -> OwnWrites | None:
        try:
            report = sync(cfg, PassOptions(), kind="watch", wait=wait)
        except LockHeld:
            return None  # stopped while waiting for the lock
        on_pass(report)
        return OwnWrites.after(cfg, report)

    own = OwnWrites({})
    catch_up = True  # one pass once the watcher is up: it sees what changed while nothing was watching
    while not stop.is_set():
        if None in _identity(cfg):
            missing = [str(root) for root in _roots(cfg) if not root.is_dir()]
            on_note(f"paused: root folder(s) missing: {', '.join(missing)}; watching again when they are back")
            while None in _identity(cfg) and not stop.wait(ROOT_CHECK_MS / 1000):
                pass
            if stop.is_set():
                break
            on_note("resumed: every root folder is back")
            catch_up = True
            continue
        identity = _identity(cfg)
        for changes in watch_changes(
            *_roots(cfg),
            watch_filter=lambda _change, path: not ignored(path),
            debounce=cap_ms,
            step=quiet_ms,
            stop_event=stop,
            rust_timeout=ROOT_CHECK_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if _identity(cfg) != identity:
                break  # a root went away or was re-created: pause, or watch the new folder
            if stop.is_set():
                return
            if catch_up or own.foreign({path for _, path in changes}):
                catch_up = False
                own = run() or own
