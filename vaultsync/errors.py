"""The one family of errors every face renders the same way: a ``kind`` (what went wrong, the row of ``FACES``),
the ``field`` a caller sent wrong (or ""), and a ``hint`` saying what to do (or "").

The command line prints ``line()``, the MCP server returns it as the tool's error, and the HTTP API answers with
the status ``FACES`` gives the kind and the JSON ``detail()``; so a stale ETag, a held lock or an unknown fact
reads the same on every face, and a new error is one class and one row.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, ClassVar

# kind -> (HTTP status, whether the client should try again shortly: a Retry-After header)
FACES: dict[str, tuple[int, bool]] = {
    "invalid": (422, False),  # a value the caller sent cannot be used
    "not_found": (404, False),  # no such entity or fact
    "ambiguous": (409, False),  # a name several things answer to
    "stale": (412, False),  # the caller's version is no longer the current one
    "unreadable": (409, False),  # a file must be fixed by hand first
    "changed": (409, False),  # a file changed while it was written, or a fact left the state asked of it
    "conflict": (409, False),  # the fact has an open conflict copy: the person decides first
    "superseded": (409, False),  # the fact was already superseded, by a successor other than the one asked for
    "reused": (422, False),  # an Idempotency-Key sent again with another request than the first
    "pending": (409, True),  # the first request of an Idempotency-Key has not been answered yet
    "history": (409, False),  # git cannot read the history
    "busy": (503, True),  # a pass held the lock too long
    "stopped": (503, True),  # a root folder is missing
}


class VaultsyncError(Exception):
    """An error a caller is told about in words, never a crash: ``kind``, ``field`` and ``hint`` as above."""

    kind: ClassVar[str] = "invalid"

    def __init__(self, message: str, field: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.hint = hint

    def line(self) -> str:
        """The error in one line, as the command line and the MCP tools say it."""
        named = f"{self.field}: " if self.field and not self.message.startswith(f"{self.field}:") else ""
        return f"{named}{self.message}" + (f" ({self.hint})" if self.hint else "")

    def detail(self) -> Any:
        """The HTTP answer's ``detail``: the words, or (for a value the caller sent) pydantic's error list."""
        if self.kind == "invalid" and self.field:
            return [{"loc": self.field.split("."), "msg": self.message, "type": "value_error"}]
        return self.line()

    @property
    def status(self) -> int:
        return FACES[self.kind][0]

    @property
    def retry(self) -> bool:
        return FACES[self.kind][1]


class Changed(VaultsyncError):
    """What a call acts on changed since it was read (a fact no longer proposed): read it again, then retry."""

    kind = "changed"


class InConflict(VaultsyncError):
    """The fact's note has an open conflict copy: the person has not chosen between the two versions yet, and a
    program's write would decide for them (or be lost when they do)."""

    kind = "conflict"


class Superseded(VaultsyncError):
    """The fact was superseded already, by ``successor``, which says something else than the new successor
    asked for: a second successor would leave two facts claiming to replace one. The caller supersedes the
    successor instead, or reads it and keeps it."""

    kind = "superseded"

    def __init__(self, fact_id: str, entity: str, successor: str) -> None:
        super().__init__(
            f"fact {fact_id!r} of {entity} is already superseded by {successor!r}; nothing was written",
            "id",
            f"to replace what it says now, supersede {successor!r}",
        )
        self.fact_id, self.entity, self.successor = fact_id, entity, successor

    def detail(self) -> Any:
        return {"msg": self.message, "id": self.fact_id, "entity": self.entity, "successor": self.successor}


class KeyReused(VaultsyncError):
    """An ``Idempotency-Key`` came back with another request (another route, or another body) than the one it
    was first sent with: answering with the first answer would tell the caller a write happened that it did not
    ask for, and making the new one would break the key's promise."""

    kind = "reused"

    def __init__(self, key: str) -> None:
        super().__init__(
            f"Idempotency-Key {key!r} was sent before with another request; nothing was done",
            "Idempotency-Key",
            "send a new key for a new request; repeat a request only with its own key",
        )

    def detail(self) -> Any:
        return [{"loc": ["header", "Idempotency-Key"], "msg": self.line(), "type": "value_error"}]


class KeyPending(VaultsyncError):
    """The first request of an ``Idempotency-Key`` is still being answered (it may wait for a pass): the repeat
    waits a moment and asks again, and then gets that first answer."""

    kind = "pending"

    def __init__(self, key: str) -> None:
        super().__init__(
            f"the request with Idempotency-Key {key!r} is still being answered", hint="try again in a moment"
        )


class HistoryError(VaultsyncError):
    """git could not read the history (not a repository, no commit yet); the message is git's."""

    kind = "history"

    def detail(self) -> Any:
        return f"cannot read the vault's history: {self.message}"


class ConfigError(ValueError):
    """The config is missing or invalid; the message names the file and the fix."""


class NotBuilt(ConfigError):
    """The package holds no built plugin: a source checkout where the plugin was never built."""


class OpenClawRefused(RuntimeError):
    """An ``openclaw`` command of ``vaultsync openclaw install`` failed; the message names it and what it said."""


class ScheduleError(RuntimeError):
    """The schedule cannot be read or changed; nothing was changed. The message says what to install or fix."""


class NotARepository(RuntimeError):
    """The vault folder is not the top of a git repository (none at all, or inside another one's tree)."""

    def __init__(self, root: Path, message: str = "") -> None:
        super().__init__(message or f"{root} is not a git repository; run `vaultsync init` or `git init` there")
        self.root = root
        self.fix = f"git -C {shlex.quote(str(root))} init -b main"


class UntrustedRepository(NotARepository):
    """git refuses the vault's repository because another user owns it (git's "dubious ownership" check: an agent
    running as root in a container on a mounted vault). The repository is whole and ``vaultsync init`` cannot help;
    ``fix`` is the command that tells git this user trusts it, with the path as git names it."""

    def __init__(self, root: Path, said: str, trusted_path: str) -> None:
        fix = f"git config --global --add safe.directory {shlex.quote(trusted_path)}"
        super().__init__(
            root,
            f"git refuses the repository at {root}: {said} (it belongs to another user than the one running "
            f"vaultsync); if you trust it, run `{fix}`, or run vaultsync as the folder's owner",
        )
        self.said = said
        self.fix = fix


class PushRefused(RuntimeError):
    """The remote declined the push for a reason of its own (a pre-receive hook, a protected branch, no write
    access), not because it holds commits the vault lacks: fetching and pushing again meets the same answer, so
    the commits wait until the person changes what the remote allows. ``reason`` is git's, ``said`` the remote's
    own lines (its hook's message)."""

    def __init__(self, label: str, branch: str, reason: str, said: str) -> None:
        told = f" (remote: {said})" if said else ""
        super().__init__(
            f"push to {label} refused by the remote: {reason}{told}; pushing again will not help: let this machine "
            f"push to {branch} (the branch's protection rules, the remote's hooks, the key's write access) or set "
            "[remote] branch to one it may push to; the commits wait here until then"
        )
        self.reason = reason
        self.said = said


class PortUnavailable(Exception):
    """The address cannot be bound (in use, or not ours to take): a setting to change, not a crash."""


class MemoryEditError(ValueError):
    """An edit that cannot be made as asked (no such entity or fact, an unreadable file, a file changed while
    being edited); nothing of the call was written."""


class Invalid(VaultsyncError, ValueError):
    """A value a client sent cannot be used; ``field`` names it."""

    kind = "invalid"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, field)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class NotFound(VaultsyncError, LookupError):
    """No such entity or fact."""

    kind = "not_found"


class Ambiguous(VaultsyncError, LookupError):
    """The id (or an entity's name) fits several entities; ``entities`` lists them, and naming one picks it."""

    kind = "ambiguous"

    def __init__(self, fact_id: str, entities: list[str], message: str | None = None) -> None:
        said = f"fact id {fact_id!r} is used by {len(entities)} entities; name one: {', '.join(entities)}"
        super().__init__(message or said, "entity", f"entities: {', '.join(entities)}")
        self.entities = entities

    def detail(self) -> Any:
        return {"msg": self.message, "entities": self.entities}


class Unreadable(VaultsyncError, RuntimeError):
    """The entity's ``items.json`` cannot be read as a fact list: it must be fixed by hand before a write."""

    kind = "unreadable"


class Stale(VaultsyncError):
    """The caller's ETag no longer matches the fact: it changed (in the file or its note) since it was read."""

    kind = "stale"


class UsageError(VaultsyncError, ValueError):
    """An option recall cannot use (a date that is not one, an entity the memory does not hold); ``field``
    names the option, so a face can point at it (the HTTP API's 422, the CLI's message)."""

    def detail(self) -> Any:
        return [{"loc": ["query", self.field], "msg": self.message, "type": "value_error"}]


class FileChanged(VaultsyncError, RuntimeError):
    """The target changed between the scan and the write; the pass leaves it for the next run."""

    kind = "changed"

    def line(self) -> str:
        return f"{self.message}: changed while it was written; read it again and retry"


class LockHeld(VaultsyncError, RuntimeError):
    """Another pass holds the lock."""

    kind = "busy"


class Stopped(VaultsyncError):
    """A memory root or the vault is missing: nothing was written."""

    kind = "stopped"


class NotProposed(Changed):
    """The fact is not waiting in the inbox (accepted, rejected or edited since it was listed)."""


class WrittenLate(FileChanged):
    """A write reached a replaced file, and the file at its name was rewritten since: ``data`` must be kept."""

    def __init__(self, path: str, data: bytes) -> None:
        super().__init__(path)
        self.data = data


# The errors outside the family, by the kind a face names them with (the command line's ``--json`` error)
KINDS: dict[type[Exception], str] = {ConfigError: "config", ScheduleError: "schedule", PortUnavailable: "setup"}


def kind_of(exc: BaseException) -> str:
    """The kind every face names ``exc`` by: a ``VaultsyncError``'s own, else its class's row of ``KINDS``, else
    ``invalid`` (a value that cannot be used)."""
    if isinstance(exc, VaultsyncError):
        return exc.kind
    return next((kind for cls, kind in KINDS.items() if isinstance(exc, cls)), "invalid")
