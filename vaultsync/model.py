"""The plain values a pass passes along: problems, unit contents, decisions and the report.

Both sides meet only through these types: the memory package never imports the vault package or the other way
round, and sync/ joins them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import IntEnum, StrEnum
from typing import Any, TextIO

Record = dict[str, Any]
Progress = Callable[[int, int], None]  # (actions done, actions in the plan); the CLI draws a bar
# The PARA folders under life/, in vault order.
PARA_KEYS = ("projects", "areas", "resources", "archives")
# The workspace's own files synced to the vault's agent folder: MEMORY.md, HEARTBEAT.md, the person's USER.md
# (OpenClaw 2026.9; ``users/<id>/USER.md`` is one per person) and dreaming's diary, DREAMS.md.
WORKSPACE_FILES = ("MEMORY.md", "HEARTBEAT.md", "USER.md", "DREAMS.md")
# Files only the agent writes: a person's edit of their note is kept as a conflict copy, never carried.
READ_ONLY_FILES = frozenset({"workspace/DREAMS.md"})
# Folder of the per-person USER.md files, ``users/<id>/USER.md``, in the workspace and in the agent folder.
USERS_DIR = "users"
SHOWN_SCOPES = 3  # scopes a one-line summary names before "and N more"


class ExitCode(IntEnum):
    CLEAN = 0
    CONFLICTS = 1
    USAGE = 2
    LOCKED = 3
    SAFETY_STOP = 4
    SKIPPED_INPUT = 5
    NOT_PUSHED = 6  # the pass ran and committed; its commits wait for the remote (unreachable, refused, a secret)
    HELD = 7  # the pass ran, but held a deletion or shrink past a bound (``vaultsync accept`` / ``restore``)
    CRASH = 70  # an unexpected error (sysexits' EX_SOFTWARE): never 1, which means "conflicts kept"
    INTERRUPTED = 130  # Ctrl-C, as shells report a process SIGINT stopped
    PIPE_CLOSED = 141  # the reader of standard output went away (``| head``), as shells report SIGPIPE


class Severity(StrEnum):
    ERROR = "error"  # an input was skipped: the pass exits 5
    WARNING = "warning"  # something a person should know; nothing was lost
    NOTE = "note"  # informational, e.g. a file vaultsync leaves alone


@dataclass(frozen=True)
class Actor:
    """Who a change is made for, so git can say who acted: the agent (its own memory files), the person (vault
    edits, review ticks, inbox decisions, resolved conflicts) or a program writing through the API, by the name
    it gives (``client``: ``openclaw``, an MCP client's own name). A program may also say which of its agents
    and which conversation wrote (``agent``, ``session``): several agents sharing one vaultsync are told apart
    in the commits' trailers (``Agent: main``, ``Session: ...``)."""

    kind: str  # "agent", "person" or "client"
    client: str = ""
    agent: str = ""
    session: str = ""

    def label(self) -> str:
        return f"api ({self.client})" if self.kind == "client" else self.kind

    def trailers(self) -> str:
        """The git trailers a commit made for this actor ends with ("" for none), ``Agent`` then ``Session``."""
        given = (("Agent", self.agent), ("Session", self.session))
        return "\n".join(f"{key}: {value}" for key, value in given if value)

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "client": self.client, "agent": self.agent, "session": self.session}

    @classmethod
    def from_json(cls, data: object) -> Actor | None:
        """The actor ``to_json`` gave; None for anything else (a record written by hand, another version)."""
        if not isinstance(data, dict) or data.get("kind") not in ("agent", "person", "client"):
            return None
        fields = [data.get(k, "") for k in ("client", "agent", "session")]
        return cls(data["kind"], *fields) if all(isinstance(f, str) for f in fields) else None


AGENT = Actor("agent")
PERSON = Actor("person")
AGENT_ID_MAX = 64  # characters kept of the agent id a program gives
SESSION_MAX = 200  # characters kept of its session key


def client(name: str | None, agent: str | None = None, session: str | None = None) -> Actor:
    """The actor for a program writing through the HTTP API or MCP; a name it does not give reads ``unnamed``.
    The name is cut to what a commit author line can hold (printable, no angle brackets, 40 characters); the
    agent id and session key, to one printable line each (64 and 200 characters), as trailers hold them."""
    clean = "".join(c for c in (name or "") if c.isprintable() and c not in "<>\n").strip()[:40]
    return Actor("client", clean or "unnamed", _line(agent, AGENT_ID_MAX), _line(session, SESSION_MAX))


def _line(value: str | None, most: int) -> str:
    return " ".join("".join(c if c.isprintable() else " " for c in (value or "")).split())[:most].strip()


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    severity: Severity = Severity.ERROR
    # A fault in the bytes of the file at ``path`` itself, which every pass reading that file finds again (a
    # note that does not parse, an empty note, a bad fact). Such a file may sit there for weeks: a pass ending
    # with only these still settles, and the quick check says them again while the file stays as it is.
    standing: bool = False

    def line(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class EntityContent:
    """What an entity note and summary.md share: the summary's own properties and its body."""

    props: Record
    body: str

    def canonical(self) -> str:
        return canonical({"props": self.props, "body": self.body})


def canonical(value: Any) -> str:
    """A stable text form for comparing JSON values: key order and formatting never count as a change."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def json_safe(value: Any) -> Any:
    """``value`` as strict JSON can hold it: ``NaN`` and the infinities an items.json may hold (Python's json
    writes them) become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``, so a face answering with the
    record never fails on them."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)  # a first import holds one per fact: slots keep that small
class SideChange:
    """One line of the change summary that feeds commit messages and the report."""

    side: str  # the side that changed: "memory" or "vault"
    scope: str  # e.g. "people/sarah", "daily 2026-01-27", "MEMORY.md"
    what: str  # e.g. "+1 fact", "1 superseded", "summary", "edited"


@dataclass(frozen=True)
class Conflict:
    key: str
    scope: str
    detail: str
    copy_path: str  # vault-relative path of the conflict copy holding the person's version


@dataclass(frozen=True)
class Held:
    """One change a pass did not carry: what (``path``, the vault note or entity folder the person knows; the
    unit ``keys``), who made it (``writer``: agent or person, on ``side``), the size before and after in
    ``unit`` (lines, facts, daily notes, units) and the bound it crossed (``rule``)."""

    path: str
    scope: str
    writer: str
    side: str
    before: int
    after: int
    unit: str
    rule: str
    keys: tuple[str, ...]

    def line(self) -> str:
        """The one message every face shows for a held change."""
        return (
            f"held: {self.path}: {self.writer} {self.rule} ({self.before} -> {self.after} {self.unit}); "
            f"the other side keeps its copy: vaultsync accept '{self.path}' carries it, "
            f"vaultsync restore '{self.path}' puts the last good version back"
        )

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "scope": self.scope,
            "writer": self.writer,
            "side": self.side,
            "before": self.before,
            "after": self.after,
            "unit": self.unit,
            "rule": self.rule,
        }


@dataclass
class RemoteState:
    """Where the vault stands with its git remote after a pass, as far as the last fetch knows."""

    remote: str  # "origin/main"
    fetched: bool = False  # this pass reached the remote
    integrated: list[str] = field(default_factory=list)  # commits made to bring the remote's work in
    pushed: bool = False
    ahead: int = 0  # commits here the remote lacks
    behind: int = 0  # commits on the remote not yet here
    waiting_since: str = ""  # set while commits wait to be pushed: when the first push failed
    why: str = ""  # why they wait, in git's words or the secret guard's

    def line(self) -> str:
        """One line for a person: what is waiting, or that the two are level."""
        if self.waiting_since:
            ahead = plural(self.ahead, "commit")
            return f"remote {self.remote}: {ahead} ahead, waiting to push since {self.waiting_since}: {self.why}"
        state = "pushed" if self.pushed else "in step" if not (self.ahead or self.behind) else "as of the last fetch"
        return f"remote {self.remote}: {self.ahead} ahead, {self.behind} behind ({state})"


@dataclass
class Report:
    """What a pass did; printed by the CLI, returned as JSON with --json."""

    dry_run: bool = False
    actions: list[str] = field(default_factory=list)
    changes: list[SideChange] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    open_conflicts: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    files_written: int = 0
    stopped: str = ""
    quick: bool = False  # the snapshot showed nothing changed since the last settled pass; nothing was read
    scoped: bool = False  # only the entities and files that changed since then were read
    remote: RemoteState | None = None  # with a [remote] configured: fetched, merged, pushed or waiting
    held: list[Held] = field(default_factory=list)  # changes the shrink guard did not carry (``core/shrink.py``)

    @property
    def waiting(self) -> bool:
        """Commits wait for the remote: the pass itself is done, the push is not."""
        return self.remote is not None and bool(self.remote.waiting_since)

    def summary(self) -> str:
        """The pass in one line, the same on every face: the record of runs, ``watch``, an API write's answer."""
        if self.stopped:
            return f"stopped: {self.stopped}"
        scopes: Counter[str] = Counter(f"{c.side} {c.scope}" for c in self.changes)
        parts = []
        if scopes:
            shown = ", ".join(list(scopes)[:SHOWN_SCOPES])
            more = len(scopes) - SHOWN_SCOPES
            parts.append(f"changed {shown}" + (f" and {more} more" if more > 0 else ""))
        parts.append(f"wrote {self.files_written} file(s)")
        parts.append(f"{len(self.commits)} commit(s)" if self.commits else "nothing to commit")
        if self.conflicts:
            parts.append(plural(len(self.conflicts), "new conflict"))
        if self.open_conflicts:
            parts.append(plural(len(self.open_conflicts), "open conflict copy", "open conflict copies"))
        if self.remote is not None and self.remote.waiting_since:
            parts.append(f"not pushed since {self.remote.waiting_since}")
        if self.held:
            parts.append(plural(len(self.held), "held change"))
        severities = Counter(str(p.severity) for p in self.problems)
        parts += [plural(n, severity) for severity, n in sorted(severities.items())]
        return ", ".join(parts)

    def attention(self, open_copies: bool = True, stop: bool = True, notes: bool = False) -> list[str]:
        """What needs a person, a line each, in the words every face uses (the terminal, ``--quiet``, ``watch``):
        the stop (unless the summary beside it says it), errors and warnings (and ``notes``), new conflicts, and
        (``open_copies``) the conflict copies still open, each ``kind: text``."""
        lines = [f"stopped: {self.stopped}"] if self.stopped and stop else []
        lines += [h.line() for h in self.held]
        lines += [f"{p.severity}: {p.line()}" for p in self.problems if notes or p.severity is not Severity.NOTE]
        lines += [
            f"conflict: {c.scope}: {c.detail}; the vault's version is kept in {c.copy_path}" for c in self.conflicts
        ]
        new = {c.copy_path for c in self.conflicts}
        lines += [
            f"open conflict: {c} (merge what you want into the note, then delete this copy)"
            for c in self.open_conflicts
            if open_copies and c not in new
        ]
        return lines

    @property
    def exit_code(self) -> ExitCode:
        if self.stopped:
            return ExitCode.SAFETY_STOP
        if any(p.severity is Severity.ERROR for p in self.problems):
            return ExitCode.SKIPPED_INPUT
        if self.held:
            return ExitCode.HELD
        if self.waiting:
            return ExitCode.NOT_PUSHED
        if self.conflicts or self.open_conflicts:
            return ExitCode.CONFLICTS
        return ExitCode.CLEAN

    def _fields(self) -> dict[str, Any]:
        """The report in its JSON order, its lists left as objects for :func:`_plain` to turn into dicts."""
        return {
            "dry_run": self.dry_run,
            "exit_code": int(self.exit_code),
            "stopped": self.stopped or None,
            "actions": self.actions,
            "changes": self.changes,
            "conflicts": self.conflicts,
            "open_conflicts": self.open_conflicts,
            "problems": self.problems,
            "commits": self.commits,
            "files_written": self.files_written,
            "quick": self.quick,
            "scoped": self.scoped,
            "remote": self.remote,
            "held": [h.as_json() for h in self.held],
        }

    def to_json(self) -> dict[str, Any]:
        fields = self._fields()
        for key in ("changes", "conflicts", "problems"):
            fields[key] = [_plain(item) for item in fields[key]]
        fields["remote"] = _plain(self.remote) if self.remote else None
        return fields

    def write_json(self, out: TextIO) -> None:
        """Write :meth:`to_json` as indented JSON, one change at a time.

        A first import of 200k facts reports 200k changes: building them all as dicts and then as one string
        cost about 100 MB more than the pass itself.
        """
        encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=_plain)
        out.writelines(encoder.iterencode(self._fields()))
        out.write("\n")


def _plain(item: object) -> dict[str, Any]:
    """One report entry as the JSON object --json prints for it."""
    if isinstance(item, SideChange):
        return {"side": item.side, "scope": item.scope, "what": item.what}
    if isinstance(item, Conflict | RemoteState):
        return asdict(item)
    if isinstance(item, Problem):
        return {"path": item.path, "message": item.message, "severity": str(item.severity)}
    raise TypeError(f"a report holds no {type(item).__name__}")


FACT_WORDS = frozenset({"+fact", "-fact", "superseded", "edited fact"})  # what a change does to a fact


def plural(n: int, word: str, many: str = "") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def phrase(counts: Counter[str]) -> str:
    """A scope's changes in a few words (``+2 facts, 1 superseded``): for commit subjects and the report."""
    parts = []
    if counts["+fact"]:
        parts.append("+" + plural(counts["+fact"], "fact"))
    if counts["-fact"]:
        parts.append("-" + plural(counts["-fact"], "fact"))
    if counts["superseded"]:
        parts.append(f"{counts['superseded']} superseded")
    if counts["edited fact"]:
        parts.append(f"{plural(counts['edited fact'], 'fact')} edited")
    parts += [word for word in counts if word not in FACT_WORDS]
    return ", ".join(parts)
