"""A real ``vaultsync serve`` for the HTTP benchmarks, on a free loopback port with a token of its own.

Both HTTP benchmarks time requests against a separate server process, as a plugin meets it; starting it, waiting
until it answers and stopping it is the same for each, so it is written once here.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Server:
    base: str  # http://127.0.0.1:<port>
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_serve(config: Path) -> Iterator[Server]:
    """``vaultsync serve`` for ``config`` until the block ends; it is answering ``/health`` when the block starts."""
    token = "bench-" + os.urandom(16).hex()
    port = free_port()
    env = {**os.environ, "VAULTSYNC_TOKEN": token}
    cmd = [sys.executable, "-m", "vaultsync.cli", "serve", "--config", str(config), "--port", str(port)]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        yield Server(base, token)
    finally:
        server.terminate()
        server.wait(timeout=30)
