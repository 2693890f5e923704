"""The base's own questions a scoped pass asks instead of reading every key: which keys are an entity's, and how
many fact notes share a name. Each is checked against the answer worked out from every key."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.core.scope import Unread
from vaultsync.names import fold
from vaultsync.state.base import BaseEntry, BaseStore

# Entity folders whose keys sort next to each other: a prefix of another, a space, a dash, a sub-folder, accents.
RELS = ["people/a", "people/a b", "people/a-b", "people/a/b", "people/aé", "people/b", "companies/a"]
# Note names that collide once folded (case, composed and decomposed accents, ß), and ones that do not.
NOTES = ["f001", "F001", "Émile", "e\u0301mile", "émile", "Straße", "STRASSE", "a#b", "x"]


def _keys(units: list[tuple[str, str]], files: list[str]) -> list[str]:
    keys = [f"fact:{rel}#{note}" for rel, note in units]
    keys += [f"entity:{rel}" for rel in {rel for rel, _ in units}]
    return keys + [f"file:{path}" for path in files]


def _store(tmp_path: Path, keys: list[str]) -> BaseStore:
    store = BaseStore(tmp_path / "base.sqlite")
    store.save({key: BaseEntry(b"{}") for key in keys}, [])
    return store


@settings(max_examples=60, deadline=None)
@given(
    units=st.lists(st.tuples(st.sampled_from(RELS), st.sampled_from(NOTES)), unique=True, max_size=25),
    scoped=st.sets(st.sampled_from(RELS), max_size=3),
    deleted=st.lists(st.integers(min_value=0, max_value=24), max_size=5),
)
def test_keys_of_and_the_name_counts_agree_with_every_key(
    tmp_path_factory: pytest.TempPathFactory,
    units: list[tuple[str, str]],
    scoped: set[str],
    deleted: list[int],
) -> None:
    store = _store(tmp_path_factory.mktemp("base"), _keys(units, ["workspace/MEMORY.md"]))
    gone = {f"fact:{units[i][0]}#{units[i][1]}" for i in deleted if i < len(units)}
    store.save({}, sorted(gone))
    keys = set(store.keys())
    assert store.count() == len(keys)

    wanted = {k for k in keys for rel in scoped if k == f"entity:{rel}" or k.startswith(f"fact:{rel}#")}
    found = store.keys_of(sorted(scoped), ["workspace/MEMORY.md"])
    assert sorted(found) == sorted(wanted | {"file:workspace/MEMORY.md"})

    facts = [k for k in keys if k.startswith("fact:")]
    read = Counter(fold(k.partition("#")[2]) for k in facts if k in wanted)
    unread = Unread(Counter(), read, store.stem_count)
    expected = Counter(fold(k.partition("#")[2]) for k in facts if k not in wanted)
    for note in NOTES:
        assert unread[fold(note)] == expected[fold(note)], note
    store.close()


def test_a_base_from_before_note_names_were_kept_is_given_them_once(tmp_path: Path) -> None:
    path = tmp_path / "base.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE units (key TEXT PRIMARY KEY, data BLOB NOT NULL, extra TEXT NOT NULL DEFAULT '{}')")
    rows = [("fact:people/a#F001", b"{}"), ("fact:people/b#f001", b"{}"), ("entity:people/a", b"{}")]
    old.executemany("INSERT INTO units (key, data) VALUES (?, ?)", rows)
    old.commit()
    old.close()

    looked = BaseStore(path, read_only=True)
    assert not looked.stems(), "a read-only look changes nothing, so it has no names to count"
    looked.close()
    assert "stem" not in {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(units)")}

    store = BaseStore(path)
    assert store.stems()
    assert store.stem_count("f001") == 2
    assert store.stem_count("people/a") == 0
    assert store.load()["fact:people/a#F001"].data == b"{}"
    store.save({"fact:people/c#f001": BaseEntry(b"{}")}, ["fact:people/a#F001"])
    assert store.stem_count("f001") == 2
    store.close()
    assert BaseStore(path, read_only=True).stems()
