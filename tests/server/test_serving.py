"""How ``vaultsync serve`` listens and stops: the connections of the socket it binds send each write at once (no
40 ms wait for a kept-alive client's delayed ACK between an answer's head and body), a port in use is still one
clear error, and a stop (SIGTERM, Ctrl-C) while a client holds ``/events`` open ends the stream cleanly, with no
traceback, within the documented two seconds' grace."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from helpers.server import AUTH, TOKEN, free_port
from helpers.twoway import Env

from vaultsync.api import PortUnavailable
from vaultsync.server.http import STOP_WAIT, listen


def nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_the_connections_serve_accepts_have_nagle_off(host: str) -> None:
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        sock = listen(host, 0)
    except PortUnavailable as exc:
        pytest.skip(f"cannot bind {host}: {exc}")
    with sock:
        assert sock.proto == socket.IPPROTO_TCP  # what asyncio looks at before it sets the option itself
        assert nodelay(sock) != 0
        with socket.create_connection(sock.getsockname()[:2]) as client, sock.accept()[0] as accepted:
            client.sendall(b"x")
            assert accepted.recv(1) == b"x"
            assert nodelay(accepted) != 0


def test_the_connections_uvicorns_loop_makes_from_it_have_nagle_off() -> None:
    """uvicorn hands the socket to ``loop.create_server``; each connection's transport is what writes answers."""

    async def accepted_nodelay() -> int:
        loop = asyncio.get_running_loop()
        made: asyncio.Future[int] = loop.create_future()

        class Record(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                made.set_result(nodelay(transport.get_extra_info("socket")))

        server = await loop.create_server(Record, sock=listen("127.0.0.1", 0))
        async with server:
            _, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
            try:
                return await asyncio.wait_for(made, timeout=30)
            finally:
                writer.close()

    assert asyncio.run(accepted_nodelay()) != 0


def test_a_port_in_use_is_one_error_naming_it_and_the_fix() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortUnavailable) as raised:
            listen("127.0.0.1", port).close()
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message and "--port" in message


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_ends_an_open_event_stream_cleanly(env: Env, stop: signal.Signals) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "vaultsync.cli", "serve", "--config", str(env.config_path), "--port", str(port)],
        env={**os.environ, "VAULTSYNC_TOKEN": TOKEN},
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60  # waiting for start-up, not a measurement
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not answer /health"
            time.sleep(0.1)
        with httpx.stream("GET", f"{url}/events", headers=AUTH, timeout=30) as stream:
            lines = stream.iter_lines()
            assert next(lines) == ": connected"
            server.send_signal(stop)
            rest = [line for line in lines if line]  # to the end of a complete response: no cut-off chunk
        assert rest[-1] == ": server stopping", rest
        # The stream ends at once; the rest is the interpreter's own exit, given room on a loaded machine.
        code = server.wait(timeout=STOP_WAIT + 8)
        err = server.stderr.read() if server.stderr else ""
        assert code == 0, err
        assert "Traceback" not in err and "Exception in ASGI" not in err and "ERROR" not in err, err
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
