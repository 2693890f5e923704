"""What the faces do when the world misbehaves: a damaged recall index, programs answering in another encoding, a
reader closing the pipe, a port already taken, SIGTERM, a weak token. Each is a plain answer and the right exit
code, never a crash file. Real trees, a real vault, real subprocesses and a real server; nothing is mocked."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from helpers.server import AUTH, TOKEN, free_port, running_server
from helpers.twoway import SARAH, Env

from vaultsync import cli
from vaultsync import config as configmod
from vaultsync.app.recall import Recaller, recall
from vaultsync.state.files import StateFiles

CLI = [sys.executable, "-m", "vaultsync.cli"]


def damage_middle_pages(path: Path) -> None:
    """Garbage over every page but the file's header, its schema and the ``meta`` table: the index still opens
    and looks current, and fails only when a query reaches the documents or the full-text pages."""
    db = sqlite3.connect(path)
    try:
        pages = db.execute("SELECT name, pageno FROM dbstat").fetchall()
        size = db.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find the pages with")
    finally:
        db.close()
    keep = {"sqlite_schema", "sqlite_master", "meta", "sqlite_autoindex_meta_1"}
    raw = bytearray(path.read_bytes())
    hit = sorted(n for name, n in pages if name not in keep)
    for n in hit:
        raw[(n - 1) * size : n * size] = b"\xa5" * size
    path.write_bytes(bytes(raw))
    assert hit


def test_a_damaged_recall_index_is_rebuilt_for_every_face(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    index = StateFiles(env.cfg.state_dir).recall
    recall(env.cfg, "firmware")
    damage_middle_pages(index)
    assert "atlas-005" in [h.id for h in recall(env.cfg, "firmware drift").hits]

    damage_middle_pages(index)
    assert cli.main(["recall", "firmware drift", "--json", "--config", str(env.config_path)]) == 0
    assert "atlas-005" in [h["id"] for h in json.loads(capsys.readouterr().out)["hits"]]

    damage_middle_pages(index)
    assert "atlas-005" in [h.id for h in Recaller(env.cfg)("firmware drift").hits]

    damage_middle_pages(index)
    with running_server(env.config_path) as url:
        answer = httpx.get(f"{url}/recall", params={"q": "firmware drift"}, headers=AUTH)
    assert answer.status_code == 200, answer.text
    assert "atlas-005" in [h["id"] for h in answer.json()["hits"]]


LATIN1 = "import sys\nsys.stdin.read()\nsys.stdout.buffer.write({!r}.encode('latin-1'))\n"


def _configure(env: Env, **tables: configmod.Review | configmod.Extract) -> None:
    env.config_path.write_text(configmod.dumps(replace(env.cfg, **tables)), encoding="utf-8")
    env.cfg = configmod.load(env.config_path)


def test_a_review_program_answering_latin1_is_refused_without_a_crash(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "summarise.py"
    script.write_text(LATIN1.format("# Sarah\n\nLikes the café downstairs.\n"), encoding="utf-8")
    command = f"{sys.executable} {script}"
    _configure(env, review=replace(env.cfg.review, command=command))
    summary = env.life / SARAH / "summary.md"
    before = summary.read_bytes()

    code = cli.main(["review", "--regenerate", SARAH, "--config", str(env.config_path)])
    said = capsys.readouterr()
    assert code != 70 and "crashed" not in said.err
    assert summary.read_bytes() == before
    assert command in said.out + said.err and "not UTF-8" in said.out + said.err
    assert "PYTHONIOENCODING=utf-8" in said.out + said.err


def test_an_extract_program_answering_latin1_is_refused_and_nothing_stored(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    note = env.workspace / "memory" / "2026-12-01.md"
    lines = note.read_text(encoding="utf-8").splitlines()
    proposal = [
        {"entity": SARAH, "fact": "Sarah likes the café", "source_line": len(lines), "note": "memory/2026-12-01.md"}
    ]
    script = tmp_path / "propose.py"
    script.write_text(LATIN1.format(json.dumps(proposal, ensure_ascii=False)), encoding="utf-8")
    command = f"{sys.executable} {script}"
    _configure(env, extract=configmod.Extract(command=command))
    items = env.items_path(SARAH).read_bytes()

    code = cli.main(["extract", "--config", str(env.config_path)])
    said = capsys.readouterr()
    assert code == 5, said
    assert command in said.out + said.err and "not UTF-8" in said.out + said.err
    assert env.items_path(SARAH).read_bytes() == items
    assert "caf\ufffd" not in env.items_path(SARAH).read_text(encoding="utf-8")
    assert not (env.cfg.state_dir / "extracted.json").exists()  # the same text is handed over next time


@pytest.mark.parametrize(
    "argv",
    [["status"], ["recall", "sarah", "--json", "--limit", "1000"], ["sync", "--dry-run"], ["review", "--dry-run"]],
)
def test_a_reader_closing_the_pipe_is_not_a_crash(env: Env, argv: list[str]) -> None:
    """``vaultsync ... | head -0``: the reader is gone before the first line; vaultsync stops quietly, exit 141."""
    crash_dir = Path(os.environ["HOME"]) / "crashes"
    run_env = {**os.environ, "XDG_STATE_HOME": str(crash_dir)}
    writer = subprocess.Popen(
        [*CLI, *argv, "--config", str(env.config_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=run_env
    )
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()  # long before the child has started up and printed anything
    err = writer.stderr.read().decode()
    code = writer.wait(timeout=300)
    assert code == 141, err
    assert "crashed" not in err and "Traceback" not in err and "Broken pipe" not in err
    assert not list(crash_dir.rglob("crash-*"))


def test_serve_on_a_port_in_use_says_so_with_exit_2(env: Env) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*CLI, "serve", "--config", str(env.config_path), "--port", str(port)],
            env={**os.environ, "VAULTSYNC_TOKEN": TOKEN},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(port) in lines[0] and "--port" in lines[0], done.stderr


def test_serve_stops_on_sigterm_with_exit_0(env: Env) -> None:
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "serve", "--config", str(env.config_path), "--port", str(port)],
        env={**os.environ, "VAULTSYNC_TOKEN": TOKEN},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60  # waiting for start-up, not a measurement
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not answer /health"
            time.sleep(0.1)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_serve_refuses_a_short_token_from_the_environment(env: Env) -> None:
    done = subprocess.run(
        [*CLI, "serve", "--config", str(env.config_path), "--port", str(free_port())],
        env={**os.environ, "VAULTSYNC_TOKEN": "abc"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "VAULTSYNC_TOKEN" in done.stderr and "32 characters" in done.stderr
