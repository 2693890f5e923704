"""The vault repository adapter against a real git repo."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.git import feed as gitfeed
from vaultsync.git import repo as gitrepo
from vaultsync.git.repo import PACK_GIT_MIN, PACK_PATHS_MIN, VaultRepo
from vaultsync.git.run import Author, GitFailed, ensure_repo, git_version


def test_a_commit_message_longer_than_the_argument_limit_is_committed_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first import of a large memory lists every scope in the body: 200k facts make ~12,000 lines."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("")
    vault = tmp_path / "vault"
    vault.mkdir()
    ensure_repo(vault)
    (vault / "note.md").write_text("x\n")
    body = "\n".join(f"people/person-{n:05d} +25 facts, summary" for n in range(12_000))
    message = f"memory -> vault: 12000 entities\n\n{body}"
    assert len(message.encode()) > 128 * 1024
    sha = VaultRepo(vault).commit(["note.md"], message, Author("vaultsync agent", "agent@vaultsync.invalid"))
    logged = subprocess.run(
        ["git", "-C", str(vault), "log", "-1", "--format=%B", sha or "HEAD"], capture_output=True, text=True, check=True
    ).stdout
    assert logged.rstrip("\n") == message


AGENT = Author("vaultsync agent", "agent@vaultsync.invalid")


def _git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True, check=True).stdout


def _tree(vault: Path) -> dict[str, str]:
    """path -> blob id of HEAD's tree."""
    out = _git(vault, "ls-tree", "-r", "-z", "HEAD")
    return {rec.split("\t", 1)[1]: rec.split()[2] for rec in out.split("\0") if rec}


def _blob(vault: Path, rel: str) -> str:
    return _git(vault, "hash-object", rel).strip()


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    (tmp_path / "gitconfig").write_text("[user]\n\tname = Pat\n\temail = pat@example.org\n")
    root = tmp_path / "vault"
    root.mkdir()
    ensure_repo(root)
    return root


@pytest.mark.parametrize("count", [3, 700])  # below and above the size where index entries are copied, not rehashed
def test_a_commit_holds_exactly_the_given_paths_and_leaves_git_status_clean(vault: Path, count: int) -> None:
    for n in range(count):
        (vault / "notes" / f"n{n:04d}.md").parent.mkdir(exist_ok=True)
        (vault / "notes" / f"n{n:04d}.md").write_text(f"note {n}\n")
    (vault / "mine.md").write_text("the person's own note, not vaultsync's to commit\n")
    repo = VaultRepo(vault)
    first = repo.commit([f"notes/n{n:04d}.md" for n in range(count)], "import", AGENT)
    assert first and _git(vault, "rev-parse", "HEAD").strip() == first
    assert set(_tree(vault)) == {f"notes/n{n:04d}.md" for n in range(count)}

    changed = [f"notes/n{n:04d}.md" for n in range(0, count, 2)]
    gone = [f"notes/n{n:04d}.md" for n in range(1, count, 2)]
    for rel in changed:
        (vault / rel).write_text("edited\n")
    for rel in gone:
        (vault / rel).unlink()
    second = repo.commit([*changed, *gone, "notes/never-existed.md"], "edit", AGENT)

    tree = _tree(vault)
    assert set(tree) == set(changed)
    assert all(tree[rel] == _blob(vault, rel) for rel in changed)
    assert _git(vault, "rev-parse", "HEAD~1").strip() == first and second
    logged = _git(vault, "log", "-1", "--format=%an <%ae>%n%B").strip()
    assert logged == "vaultsync agent <agent@vaultsync.invalid>\nedit"
    assert _git(vault, "status", "--porcelain").splitlines() == ["?? mine.md"]
    assert repo.commit(changed, "again", AGENT) is None, "an unchanged path made a commit"


def _objects(vault: Path) -> dict[str, int]:
    counted = (line.split(": ") for line in _git(vault, "count-objects", "-v").splitlines())
    return {key: int(value) for key, value in counted if key in ("count", "in-pack", "packs")}


@pytest.mark.parametrize("chunk", [gitfeed.PACK_CHUNK, 200])
def test_a_large_commit_puts_its_new_blobs_in_packs_and_a_small_one_leaves_them_loose(
    vault: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """A first import must not leave a loose object file per note; an hourly pass must not leave a pack each."""
    monkeypatch.setattr(gitfeed, "PACK_CHUNK", chunk)
    repo = VaultRepo(vault)
    if git_version()[:2] < PACK_GIT_MIN:
        pytest.skip("this git writes a pack per blob through bulk check-in; large commits stay loose there")
    many = [f"notes/n{n:04d}.md" for n in range(PACK_PATHS_MIN + 10)]
    (vault / "notes").mkdir()
    for n, rel in enumerate(many):
        (vault / rel).write_text(f"note {n}\n" + "x" * n)
    repo.commit(many, "import", AGENT)
    after_import = _objects(vault)
    packs = -(-len(many) // chunk)
    assert after_import["packs"] == packs and after_import["in-pack"] == len(many)
    assert after_import["count"] < 20, "the import's blobs were written loose"  # only trees and the commit
    assert all(_tree(vault)[rel] == _blob(vault, rel) for rel in many)
    assert _git(vault, "fsck", "--no-progress") == ""

    (vault / many[0]).write_text("edited\n")
    repo.commit([many[0]], "edit", AGENT)
    after_edit = _objects(vault)
    assert after_edit["packs"] == packs and after_edit["count"] > after_import["count"]
    assert _git(vault, "show", f"HEAD:{many[0]}") == "edited\n"
    assert _git(vault, "status", "--porcelain") == ""


def _staged(vault: Path) -> dict[str, str]:
    """path -> blob id of what the real index holds."""
    out = _git(vault, "ls-files", "--stage", "-z")
    return {rec.split("\t", 1)[1]: rec.split()[1] for rec in out.split("\0") if rec}


def _loose_kinds(vault: Path) -> list[str]:
    """The type of every loose object of the repository."""
    objects = vault / ".git" / "objects"
    ids = [f"{d.name}{f.name}" for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()]
    return sorted(_git(vault, "cat-file", "-t", oid).strip() for oid in ids)


def _fed_notes(vault: Path, count: int) -> tuple[list[str], list[bytes]]:
    (vault / "notes").mkdir()
    paths = [f"notes/n{n}.md" for n in range(count)]
    data = [f"---\nid: n{n}\n---\nnote {n}\n".encode() for n in range(count)]
    for rel, body in zip(paths, data, strict=True):
        (vault / rel).write_bytes(body)
    return paths, data


def test_a_feed_stores_notes_in_packs_as_they_come_and_stages_them_for_the_commit(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Notes fed a batch at a time end up in a pack each ``PACK_CHUNK`` notes, and staged; the commit then
    stores no blob again.

    (git fast-import leaves fewer than ``fastimport.unpackLimit`` objects loose, 100 by default: a feed only
    runs from ``PACK_PATHS_MIN`` notes up, ``PACK_CHUNK`` to a pack.)
    """
    monkeypatch.setattr(gitfeed, "PACK_CHUNK", 110)
    repo = VaultRepo(vault)
    assert repo.feed(PACK_PATHS_MIN - 1) is None, "a small pass got a feed"
    paths, data = _fed_notes(vault, 200)
    feed = repo.feed(PACK_PATHS_MIN)
    assert feed is not None
    with feed:
        for start, stop in ((0, 40), (40, 130), (130, 200)):
            feed.add(paths[start:stop], gitfeed.fast_import_blobs(data[start:stop]))
    staged = _staged(vault)
    assert staged == {rel: _blob(vault, rel) for rel in paths}
    # The first two batches (130 notes, past 110) in a pack, the last 70 loose (under the unpack limit).
    assert _objects(vault) == {"count": 70, "in-pack": 130, "packs": 1}
    assert not list((vault / ".git" / "objects" / "pack").glob("*.keep")), "git fast-import left its pack kept"
    repo.commit(paths, "import", AGENT, staged=paths)
    assert _tree(vault) == staged
    assert _objects(vault)["in-pack"] == 130 and _objects(vault)["packs"] == 1
    assert _loose_kinds(vault).count("blob") == 70, "the commit stored a fed note a second time"
    assert _git(vault, "status", "--porcelain") == ""
    assert _git(vault, "fsck", "--no-progress", "--strict") == ""


@pytest.mark.parametrize("trouble", ["bad stream", "path outside", "edited after"])
def test_a_feed_that_goes_wrong_leaves_the_work_to_the_commit(vault: Path, trouble: str) -> None:
    """git refusing the bytes or a path, or a note changed after it was fed: the commit takes what is on disk."""
    repo = VaultRepo(vault)
    paths, data = _fed_notes(vault, 3)
    blobs = gitfeed.fast_import_blobs(data)
    fed = list(paths)
    if trouble == "bad stream":
        blobs = blobs[:-5]  # cut inside the last note: git fast-import fails at the end of its input
    elif trouble == "path outside":
        fed.append("../outside.md")
    feed = repo.feed(PACK_PATHS_MIN)
    assert feed is not None
    with feed:
        feed.add(fed, blobs)
        if trouble == "edited after":
            (vault / paths[1]).write_text("edited by the person meanwhile\n")
    staged = _staged(vault)
    if trouble == "edited after":
        assert staged == {rel: _blob(vault, rel) for rel in paths}, "the feed staged what it was given, not the file"
    else:
        assert staged == {}, f"the feed staged notes after git refused them: {staged}"
    assert repo.commit(paths, "import", AGENT)
    assert _tree(vault) == {rel: _blob(vault, rel) for rel in paths}
    assert _git(vault, "show", f"HEAD:{paths[1]}") == (vault / paths[1]).read_text()
    assert _git(vault, "status", "--porcelain") == ""
    assert _git(vault, "fsck", "--no-progress", "--no-dangling") == ""  # the version fed, then edited, dangles


def test_paths_said_to_be_staged_are_committed_as_the_index_holds_them(vault: Path) -> None:
    """A first import commits its notes as its feed staged them (and checked them for secrets); a note the
    person changed since stays a change in the working tree, for the next pass."""
    repo = VaultRepo(vault)
    paths = [f"n{n:03d}.md" for n in range(gitrepo.COPY_ENTRIES_MIN)]  # enough to copy the index's entries
    for rel in paths:
        (vault / rel).write_text(f"{rel} as written\n")
    _git(vault, "add", "--", *paths)
    staged = _staged(vault)
    (vault / paths[0]).write_text("changed by the person after it was staged\n")
    (vault / "other.md").write_text("not staged\n")
    assert repo.commit([*paths, "other.md"], "import", AGENT, staged=paths)
    assert _tree(vault) == {**staged, "other.md": _blob(vault, "other.md")}
    assert _git(vault, "status", "--porcelain") == f" M {paths[0]}\n"


def test_index_entries_copied_a_few_bytes_at_a_time_are_committed_whole(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real index's listing is read in chunks that cut records anywhere, names in UTF-8 included."""
    monkeypatch.setattr(gitrepo, "ENTRIES_CHUNK", 37)
    repo = VaultRepo(vault)
    paths = [f"notes/n{n:03d}-日記.md" for n in range(gitrepo.COPY_ENTRIES_MIN)]
    (vault / "notes").mkdir()
    for rel in [*paths, "kept.md"]:
        (vault / rel).write_text(f"{rel}\n")
    with open(os.path.join(os.fsencode(vault), b"notes/n1\xe9.md"), "wb") as handle:  # not UTF-8: the person's
        handle.write(b"latin-1 name, staged by the person\n")
    _git(vault, "add", "notes")
    assert repo.commit([*paths, "kept.md"], "import", AGENT)
    for rel in paths[::3]:
        (vault / rel).unlink()
    for rel in paths[1::3]:
        (vault / rel).write_text("edited\n")
    assert repo.commit([*paths, "absent.md"], "edit", AGENT)
    assert _tree(vault) == {rel: _blob(vault, rel) for rel in [*paths[1::3], *paths[2::3], "kept.md"]}
    assert _git(vault, "status", "--porcelain") == 'A  "notes/n1\\351.md"\n'  # still staged, not committed


def test_an_index_git_cannot_list_fails_the_commit_and_leaves_head_alone(vault: Path) -> None:
    repo = VaultRepo(vault)
    (vault / "first.md").write_text("first\n")
    head = repo.commit(["first.md"], "first", AGENT)
    paths = [f"n{n:03d}.md" for n in range(gitrepo.COPY_ENTRIES_MIN)]
    for rel in paths:
        (vault / rel).write_text(f"{rel}\n")
    _git(vault, "add", "--", *paths)
    index = vault / ".git" / "index"
    index.write_bytes(index.read_bytes()[:100])  # cut short, as by a full disk
    with pytest.raises(GitFailed, match="ls-files"):
        repo.commit(paths, "import", AGENT, staged=paths)
    assert _git(vault, "rev-parse", "HEAD").strip() == head
    assert not (vault / ".git" / f"{gitrepo.PRIVATE_INDEX}.head").exists()


def test_unlike_names_the_paths_the_index_does_not_hold_as_expected(vault: Path) -> None:
    repo = VaultRepo(vault)
    for name in ("same.md", "edited.md"):
        (vault / name).write_text(f"{name} as written\n")
    expected = {rel: _blob(vault, rel) for rel in ("same.md", "edited.md")}
    expected["never-staged.md"] = expected["same.md"]
    foreign = os.path.join(os.fsencode(vault), b"caf\xe9.md")  # a name not in UTF-8, the person's
    with open(foreign, "wb") as handle:
        handle.write(b"latin-1 name\n")
    _git(vault, "add", "-A")
    assert repo.unlike(expected) == {"never-staged.md"}
    (vault / "edited.md").write_text("changed by the person before git hashed it\n")
    _git(vault, "add", "edited.md")
    assert repo.unlike(expected) == {"edited.md", "never-staged.md"}


def test_a_commit_builds_on_a_commit_the_person_made_in_between(vault: Path) -> None:
    """obsidian-git commits between two passes: vaultsync's next commit must keep that work, not undo it."""
    (vault / "a.md").write_text("a1\n")
    (vault / "b.md").write_text("b1\n")
    repo = VaultRepo(vault)
    repo.commit(["a.md", "b.md"], "import", AGENT)
    (vault / "b.md").write_text("b2 by the person\n")
    (vault / "c.md").write_text("c by the person\n")
    _git(vault, "add", "-A")
    _git(vault, "commit", "-qm", "vault backup")
    person = _git(vault, "rev-parse", "HEAD").strip()
    (vault / "a.md").write_text("a2\n")

    sha = repo.commit(["a.md"], "agent edit", AGENT)

    assert _git(vault, "rev-parse", f"{sha}~1").strip() == person
    assert {rel: (vault / rel).read_text() for rel in ("a.md", "b.md", "c.md")} == {
        rel: _git(vault, "show", f"HEAD:{rel}") for rel in ("a.md", "b.md", "c.md")
    }
    assert _git(vault, "status", "--porcelain") == ""


def test_what_the_person_staged_stays_out_of_a_commit_and_stays_staged(vault: Path) -> None:
    (vault / "a.md").write_text("a1\n")
    (vault / "p.md").write_text("p1\n")
    repo = VaultRepo(vault)
    repo.commit(["a.md", "p.md"], "import", AGENT)
    (vault / "p.md").write_text("p2, staged by the person\n")
    _git(vault, "add", "p.md")
    (vault / "a.md").write_text("a2\n")

    repo.commit(["a.md"], "agent edit", AGENT)

    assert _git(vault, "show", "HEAD:p.md") == "p1\n"
    assert _git(vault, "show", "HEAD:a.md") == "a2\n"
    assert _git(vault, "status", "--porcelain").splitlines() == ["M  p.md"]


@pytest.mark.parametrize("size", [3_000, 200_000])  # git reads small files, and maps large ones into memory
def test_commits_go_through_while_a_note_is_rewritten_in_place(vault: Path, size: int) -> None:
    """Obsidian saves by truncating and rewriting: git may read a torn file (small) or die of SIGBUS (large)."""
    note = vault / "daily.md"
    note.write_text("x" * size)
    repo = VaultRepo(vault)
    repo.commit(["daily.md"], "first", AGENT)
    stop = threading.Event()

    def obsidian() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            with open(note, "w") as handle:
                handle.write(str(n % 10) * size)
            time.sleep(0.005)  # a save every few milliseconds: far more often than any editor

    saver = threading.Thread(target=obsidian)
    saver.start()
    try:
        for n in range(6):
            (vault / "other.md").write_text(f"edit {n}\n")
            repo.commit(["daily.md", "other.md"], f"edit {n}", AGENT)
    finally:
        stop.set()
        saver.join()
    assert not (vault / ".git" / "index.lock").exists()
    assert _git(vault, "show", "HEAD:other.md") == "edit 5\n"
    assert _git(vault, "fsck", "--no-progress", "--no-dangling") == ""  # a blob of a torn read may dangle


NAMES = ["a.md", "b c.md", "é.md", "李伟.md", "x-y.md", "a-b.md", "a.b.md", "a"]


@settings(max_examples=int(os.environ.get("VAULTSYNC_TREE_EXAMPLES", "40")), deadline=None)
@given(
    rounds=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["", "p", "p/q", "p/q-r", "p/q/facts", "新", "new/deep/er"]),
                st.sampled_from(NAMES),
                st.sampled_from(["write", "write", "delete"]),
            ),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_small_commits_built_by_editing_trees_hold_what_the_files_hold(
    tmp_path_factory: pytest.TempPathFactory, rounds: list[list[tuple[str, str, str]]]
) -> None:
    """A commit of a few paths is built by editing HEAD's trees (no index): every tree must be git's own."""
    vault = tmp_path_factory.mktemp("trees") / "vault"
    vault.mkdir()
    ensure_repo(vault)
    (vault / "p").mkdir()
    (vault / "p" / "seed.md").write_text("seed\n")
    (vault / "top.md").write_text("top\n")
    repo = VaultRepo(vault)
    repo.commit(["p/seed.md", "top.md"], "seed", AGENT)
    marker = (vault / ".git" / "vaultsync-index.head").read_text()
    for number, edits in enumerate(rounds):
        touched = []
        for folder, name, op in edits:
            rel = f"{folder}/{name}" if folder else name
            path = vault / rel
            if path.is_dir() or any(p.is_file() for p in path.parents if p != vault and p.is_relative_to(vault)):
                continue  # a file where a folder is (or the reverse) is not what a vault holds
            if op == "write":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"{rel} in round {number}\n", encoding="utf-8")
            elif path.exists():
                path.unlink()
            touched.append(rel)
        repo.commit(touched, f"round {number}", AGENT)
        on_disk = {
            p.relative_to(vault).as_posix(): _blob(vault, p.relative_to(vault).as_posix())
            for p in vault.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(vault).parts
        }
        assert _tree(vault) == on_disk
        assert _git(vault, "status", "--porcelain") == ""
    assert _git(vault, "fsck", "--strict", "--no-progress") == ""
    assert (vault / ".git" / "vaultsync-index.head").read_text() == marker, "small commits used the private index"
    assert not list((vault / ".git").glob("vaultsync-trees/*")), "tree bodies left behind"
