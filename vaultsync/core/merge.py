"""Merging a unit both sides changed: records field by field, text line by line.

On a real conflict the memory side's value wins in the merged result and the caller keeps the vault's version
in a conflict copy, so the agent never reads conflict markers and the person sees both versions.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from vaultsync.core.decide import decide
from vaultsync.core.units import World, same
from vaultsync.keys import ENTITY, FACT
from vaultsync.model import EntityContent, Record, canonical

_MISSING = object()


def merge_records(base: Record | None, memory: Record, vault: Record) -> tuple[Record, str]:
    """Three-way merge per field; with no base, fields only one side has are simply taken."""
    base = base or {}
    merged: Record = {}
    clashes: list[str] = []
    keys = list(memory) + [k for k in vault if k not in memory]
    for key in keys:
        b = base.get(key, _MISSING)
        m = memory.get(key, _MISSING)
        v = vault.get(key, _MISSING)
        if _eq(m, v):
            value = m
        elif _eq(m, b):
            value = v
        elif _eq(v, b):
            value = m
        elif m is _MISSING or v is _MISSING:
            value = v if m is _MISSING else m  # an edit beats a deletion of the same field
        else:
            clashes.append(key)
            value = m
        if value is not _MISSING:
            merged[key] = value
    detail = f"both sides changed {', '.join(clashes)}" if clashes else ""
    return merged, detail


def _eq(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return canonical(a) == canonical(b)


def union_text(memory: str, vault: str) -> str:
    """Two new texts with no common ancestor: keep both, in order, each shared line once.

    This is what happens every morning the agent and Obsidian's Daily template both create today's note.
    """
    import difflib  # here, not at the top: most passes merge no text, and every writing pass imports this module

    a = memory.splitlines(keepends=True)
    b = vault.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n"
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        out += a[i1:i2]
        if op != "equal":
            out += b[j1:j2]
    return "".join(out)


def merge_text(base: str | None, memory: str, vault: str) -> tuple[str, str]:
    """Line-wise three-way merge with ``git merge-file``; a union when there is no base."""
    if base is None:
        return union_text(memory, vault), ""
    import tempfile  # as difflib in union_text

    with tempfile.TemporaryDirectory(prefix="vaultsync-merge-") as tmp:
        paths = []
        for name, text in (("memory", memory), ("base", base), ("vault", vault)):
            path = Path(tmp) / name
            path.write_bytes(text.encode())
            paths.append(str(path))
        run = subprocess.run(
            ["git", "merge-file", "-p", "-L", "memory", "-L", "base", "-L", "vault", *paths],
            capture_output=True,
            check=False,
        )
    if run.returncode < 0 or run.returncode > 127:
        raise RuntimeError(f"git merge-file failed: {run.stderr.decode(errors='replace')}")
    if run.returncode == 0:
        return run.stdout.decode(), ""
    return memory, "both sides changed the same lines"


def merge_entities(
    base: EntityContent | None, memory: EntityContent, vault: EntityContent
) -> tuple[EntityContent, str]:
    props, props_clash = merge_records(base.props if base else None, memory.props, vault.props)
    body, body_clash = merge_text(base.body if base else None, memory.body, vault.body)
    detail = "; ".join(d for d in (props_clash, body_clash) if d)
    if detail:
        return memory, detail
    return EntityContent(props, body), ""


def merge_files(base: bytes | None, memory: bytes, vault: bytes) -> tuple[bytes, str]:
    try:
        texts = [None if base is None else base.decode(), memory.decode(), vault.decode()]
    except UnicodeDecodeError:
        return memory, "both sides changed a file that is not text"
    merged, conflict = merge_text(*texts)  # type: ignore[arg-type]
    return merged.encode(), conflict


MERGERS = {FACT: merge_records, ENTITY: merge_entities}


def decide_all(world: World) -> None:
    for state in world.units.values():
        merger = MERGERS.get(state.kind, merge_files)
        state.decision = decide(state.base, state.memory, state.vault, same(state.kind), merger)
