"""History: the story of an entity, a fact or a note, told from the vault's git history.

Every pass commits the person's edits under the person's name and the agent's side under ``git.agent_name``,
one note per fact: so ``git log`` on a fact's note is that fact's history, and comparing the note before and
after a commit says what changed in words a person reads (``status: active -> superseded (by sarah-007)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from vaultsync.app.facts import locate, resolve
from vaultsync.config import Config
from vaultsync.errors import Ambiguous, Invalid, NotFound
from vaultsync.git.history import Commit, FileChange, HistoryError, blobs, log, messages_with
from vaultsync.git.run import CLIENT_PREFIX
from vaultsync.keys import entity_key, scope_of
from vaultsync.model import PARA_KEYS
from vaultsync.text.decoding import NotText, decode
from vaultsync.text.yamlcore import YamlError, parse_properties, split_note
from vaultsync.vault.layout import FACTS_DIR, VaultLayout

__all__ = ["Ambiguous", "History", "HistoryChange", "HistoryError", "Invalid", "NotFound", "history"]

DERIVED = frozenset({"entity", "mentions", "related", "facts_active", "facts_superseded", "updated", "kind", "tags"})
SHORT = 40  # a property value longer than this is said to be "edited" rather than quoted


@dataclass
class HistoryChange:
    when: str
    who: str
    side: str  # agent or person
    what: str
    commit: str
    paths: list[str] = field(default_factory=list)
    agent: str = ""  # which of a program's agents made it (the commit's ``Agent`` trailer), "" when none said
    session: str = ""  # the conversation it came from (the ``Session`` trailer)

    def to_json(self) -> dict[str, Any]:
        return {
            "when": self.when,
            "who": self.who,
            "side": self.side,
            "what": self.what,
            "commit": self.commit,
            "paths": self.paths,
            "agent": self.agent or None,
            "session": self.session or None,
        }


@dataclass
class History:
    target: str | None
    changes: list[HistoryChange] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"changes": [change.to_json() for change in self.changes]}


@dataclass
class _Target:
    specs: list[str]  # git pathspecs
    follow: bool = False  # one file, followed across renames
    entity: str | None = None  # the entity named, whose earlier names are followed too
    miss: str | None = None  # what to say when the history holds nothing by that name either


def _target(cfg: Config, target: str) -> _Target:
    """What ``target`` names, as git pathspecs.

    A path is taken as one. Any other name is resolved as every surface resolves it (``app/facts.resolve``):
    an entity, then a fact id (``Ambiguous`` when several entities hold it), then ``<entity>/<fact id>``. A
    name that fits nothing the memory holds now is looked for by name in the history (a forgotten fact, a
    deleted entity). An entity's folder is matched under any PARA folder, so a move from ``1 Projects`` to
    ``4 Archives`` is followed (the path below the PARA folder stays the same in such a move).
    """
    layout = VaultLayout(cfg.layout)
    name = target.strip().strip("/")
    root, _, rest = name.partition("/")
    if root == "workspace":
        return _Target([layout.file_note(name) or name], True)
    if root == "life" and rest:
        name = rest.removesuffix("/items.json").removesuffix("/summary.md")
        if name.endswith(".md"):
            return _Target([layout.file_note(f"life/{name}") or name], True)
    if name.endswith(".md") or os.path.isfile(cfg.vault / name):  # False, not an error, for a name too long
        return _Target([name], True)
    try:
        rel = resolve(cfg, name, "target")
        return _Target([_below_para(layout, rel)], entity=rel)
    except NotFound as exc:
        miss = str(exc).replace("no entity", "nothing named", 1)
    holder, _, fact_id = name.rpartition("/")
    try:
        found, _, record = locate(cfg, fact_id, holder or None)
        return _Target([layout.fact_note(found, str(record.get("id")))], True)
    except Ambiguous as exc:
        if holder:
            raise
        named = [f"{rel}/{fact_id}" for rel in exc.entities]
        said = f"fact id {fact_id!r} is used by {len(named)} entities; say which: {', '.join(named)}"
        raise Ambiguous(fact_id, named, said) from None
    except (NotFound, Invalid):
        pass
    parts = name.split("/")
    if layout.para_of_path(name) or parts[0] in PARA_KEYS:
        parts = parts[1:]
    if len(parts) > 1:
        return _Target([f":(glob)*/{'/'.join(parts)}/**"], miss=miss)
    word = parts[0] if parts else name
    globs = [f":(glob)**/{FACTS_DIR}/{word}.md", f":(glob)**/{word}/{word}.md", f":(glob)**/{word}/{FACTS_DIR}/*.md"]
    return _Target(globs, miss=miss)


def _below_para(layout: VaultLayout, rel: str) -> str:
    """The entity's notes in whichever PARA folder they are now."""
    return f":(glob)*/{layout.entity_dir(rel).partition('/')[2]}/**"


def _former_names(cfg: Config, rel: str) -> list[tuple[str, str]]:
    """(earlier name, the commit that moved it) of the entity, newest move first, from the pass's own commit
    messages: a pass that moves an entity's memory folder after its vault folder moved says ``<scope> moved
    from <old folder>`` (``core/changes.py``). git follows one file across a rename, never a folder, and an
    entity's note changes its name with its folder."""
    moves = []
    current = rel
    for sha, text in messages_with(cfg.vault, "moved from "):
        scope = scope_of(entity_key(current))
        for line in text.splitlines():
            for piece in line.partition(": ")[2].split("; ") if ": " in line else [line]:
                said = piece.strip()
                if said.startswith(f"{scope} ") and "moved from " in said:
                    old = said.split("moved from ", 1)[1].split(",")[0].strip()
                    if old and old != current:
                        moves.append((old, sha))
                        current = old
    return moves


def history(cfg: Config, target: str | None = None, since: str | None = None, limit: int = 50) -> History:
    """The changes to ``target`` (an entity, a fact id, or a vault or memory path), newest first; without one,
    the latest commits across the memory, like a changelog. Raises ``HistoryError`` when git cannot read it."""
    _check(target, "target")
    _check(since, "since")
    result = History(target)
    if not target:
        roots = [*cfg.layout.para_folders().values(), cfg.layout.daily]
        for commit in log(cfg.vault, roots, since=since, limit=limit):
            paths = [f.path for f in commit.files]
            result.changes.append(_change(cfg, commit, commit.subject, paths))
        return result
    named = _target(cfg, target)
    specs = named.specs
    commits = log(cfg.vault, specs, since=since, follow=named.follow)
    layout = VaultLayout(cfg.layout)
    for old, sha in _former_names(cfg, named.entity) if named.entity else []:
        # From the move on back, under every name the entity had: the move itself then reads as one.
        specs = [*specs, _below_para(layout, old)]
        shas = [c.sha for c in commits]
        commits = commits[: shas.index(sha)] if sha in shas else commits
        commits += log(cfg.vault, specs, since=since, start=sha)
    if not commits and named.miss:
        raise NotFound(named.miss)
    for commit, words in zip(commits, _describe_all(cfg, commits), strict=True):
        grouped: dict[str, list[str]] = {}
        for file, what in zip(commit.files, words, strict=True):
            grouped.setdefault(what, []).append(file.path)
        for what, paths in grouped.items():
            result.changes.append(_change(cfg, commit, what, paths))
            if len(result.changes) >= limit:
                return result
    return result


def _check(value: str | None, field: str) -> None:
    """Refuse what cannot be a target or a date before git sees it: a control character (a NUL cannot even be
    passed to a program), a path climbing out of the vault with ``..``, or a leading ``:``, which git would
    read as pathspec magic rather than a name. Raises ``Invalid`` naming the option."""
    if value is None:
        return
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise Invalid(field, "control characters are not allowed")
    if field == "target" and (value.strip().startswith(":") or ".." in value.replace("\\", "/").split("/")):
        raise Invalid(field, "expected an entity, a fact id or a path inside the vault or the memory")


def _change(cfg: Config, commit: Commit, what: str, paths: list[str]) -> HistoryChange:
    # An API or MCP client acts for the agent: its side is the agent's, its name (``who``) says which program.
    side = "agent" if commit.author == cfg.git.agent_name or commit.author.startswith(CLIENT_PREFIX) else "person"
    return HistoryChange(commit.when, commit.author, side, what, commit.sha, paths, commit.agent, commit.session)


def _describe_all(cfg: Config, commits: list[Commit]) -> list[list[str]]:
    """Words for every file change of every commit, with the old and new notes read in one batch."""
    specs: list[str] = []
    for commit in commits:
        for file in commit.files:
            if file.status in "MRT":
                specs += [f"{commit.sha}^:{file.old_path or file.path}", f"{commit.sha}:{file.path}"]
    contents = iter(blobs(cfg.vault, specs))
    words = []
    for commit in commits:
        said = []
        for file in commit.files:
            before, after = (next(contents), next(contents)) if file.status in "MRT" else (None, None)
            said.append(describe(file, before, after))
        words.append(said)
    return words


def _note(data: bytes | None) -> tuple[dict[str, Any], str]:
    if data is None:
        return {}, ""
    try:
        fm, body = split_note(decode(data))
    except NotText:
        return {}, ""
    try:
        return (parse_properties(fm) if fm is not None else {}), body
    except YamlError:
        return {}, body


def _plain(value: Any) -> str:
    text = str(value).strip()
    return text[2:-2].split("|")[0] if text.startswith("[[") and text.endswith("]]") else text


def describe(file: FileChange, before: bytes | None, after: bytes | None) -> str:
    """What one commit did to one note, in words: created, deleted, moved, and what changed inside."""
    if file.status == "A":
        return "created"
    if file.status == "D":
        return "deleted"
    words = []
    if file.old_path and file.old_path != file.path:
        old_top, new_top = file.old_path.split("/", 1)[0], file.path.split("/", 1)[0]
        if old_top != new_top:
            words.append(f"moved from {old_top} to {new_top}")
        else:
            words.append(f"moved from {file.old_path.rsplit('/', 1)[0]} to {file.path.rsplit('/', 1)[0]}")
    old_props, old_body = _note(before)
    new_props, new_body = _note(after)
    fact = f"/{FACTS_DIR}/" in f"/{file.path}"
    if old_props.get("status") != new_props.get("status"):
        word = f"status: {old_props.get('status')} -> {new_props.get('status')}"
        successor = new_props.get("supersededBy", new_props.get("superseded_by"))
        words.append(word + (f" (by {_plain(successor)})" if successor else ""))
    for key in sorted(set(old_props) | set(new_props)):
        if key in DERIVED or key in ("status", "supersededBy", "superseded_by", "id"):
            continue
        old, new = old_props.get(key), new_props.get(key)
        if old != new:
            short = all(len(str(v)) <= SHORT for v in (old, new) if v is not None)
            words.append(f"{key}: {old} -> {new}" if short else f"{key} edited")
    if old_body.strip() != new_body.strip():
        parts = file.path.split("/")
        entity_note = len(parts) > 1 and parts[-1].removesuffix(".md") == parts[-2]
        words.append("fact text edited" if fact else "summary edited" if entity_note else "text edited")
    if not words and any(old_props.get(k) != new_props.get(k) for k in DERIVED):
        words.append("links updated")
    return "; ".join(words) or "edited"
