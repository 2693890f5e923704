"""A real ``vaultsync serve`` on 127.0.0.1, started as a subprocess on a free port, for the API tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

TOKEN = "test-token-" + "x" * 40
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(config: Path) -> Iterator[str]:
    """The base URL of a server over ``config``; it is stopped when the block ends."""
    port = free_port()
    env = {**os.environ, "VAULTSYNC_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "serve", "--config", str(config), "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60  # waiting for start-up, not a measurement
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("serve did not answer /health")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
