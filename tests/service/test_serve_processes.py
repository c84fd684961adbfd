"""`errkb serve --workers N`: the connections are spread over the processes (each has its own
listening socket), a port already in use fails in one line, and SIGTERM stops them all.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

import httpx
import pytest

from errkb.service.cli import failures

pytestmark = pytest.mark.slow  # real server processes (see `make test-fast`)

ERRKB = str(Path(sys.executable).parent / "errkb")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(tmp_path: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}"}
    with open(tmp_path / "stderr", "wb") as err:  # a file: a server's log never fills a pipe
        return subprocess.Popen(
            [ERRKB, "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )


def _wait_healthy(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(900):
        assert proc.poll() is None, "the server exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail("the server did not answer")


def _owners(port: int) -> set[int]:
    """The processes holding the server side of established connections on `port`."""
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {int(pid) for pid in re.findall(r"pid=(\d+)", out)}


def test_connections_are_spread_over_the_processes(tmp_path: Path) -> None:
    port = _free_port()
    proc = _serve(tmp_path, port, 3)
    clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}") for _ in range(24)]
    try:
        _wait_healthy(port, proc)
        time.sleep(2)  # every process listening (the health check needs only one)
        assert all(c.get("/api/snapshots").status_code == 200 for c in clients)
        owners = _owners(port)  # the 24 connections are still open (keep-alive)
    finally:
        for c in clients:
            c.close()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    # With one shared socket, one process took nearly all of them; 24 connections hashed over
    # three sockets all landing on one would happen once in ~10^11 runs.
    assert len(owners) >= 2, owners
    assert proc.pid not in owners  # the parent only holds the port
    assert proc.returncode == 0


def test_a_port_in_use_fails_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve(tmp_path, port, 2)
        proc.wait(120)
    err = (tmp_path / "stderr").read_text()
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == failures.CONFIG, lines
    assert lines[-1] == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use (choose another --port)"
    )
    assert not [line for line in lines if "Traceback" in line]


def test_connections_of_a_process_socket_have_nagle_off() -> None:
    """asyncio sets TCP_NODELAY only where the socket names IPPROTO_TCP; with Nagle on, every
    answer written in two parts waited for the client's delayed ACK (40 ms a request)."""
    import asyncio

    from errkb.service.processes import reuseport_socket

    async def accepted_nodelay() -> int:
        sock = reuseport_socket("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(connected, sock=sock)
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            return await asyncio.wait_for(seen, 30)
        finally:
            writer.close()
            server.close()
            await server.wait_closed()

    assert asyncio.run(accepted_nodelay()) != 0


def _serve_one(factory: str, port: int, env: dict[str, str]) -> BaseProcess:
    """A server process of `errkb serve --workers N`, with a test app."""
    from errkb.service.processes import serve_one

    saved = dict(os.environ)
    os.environ.update(env)  # a spawned process starts with the environment of this moment
    try:
        process = multiprocessing.get_context("spawn").Process(
            target=serve_one,
            args=(factory, "127.0.0.1", port, {"log_level": "warning", "lifespan": "on"}),
        )
        process.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return process


def _answers(port: int, count: int) -> list[str]:
    """The answers to `count` requests, each on a connection of its own (new connections are
    what the kernel spreads over the listening sockets); "" for one not answered in 3 s."""
    out = []
    for _ in range(count):
        try:
            with httpx.Client(timeout=3) as client:
                out.append(client.get(f"http://127.0.0.1:{port}/").text)
        except httpx.HTTPError:
            out.append("")
    return out


def test_a_process_still_starting_takes_no_connections(tmp_path: Path) -> None:
    """A process listens only once its app has started (the matcher's index is built then):
    before, it took its share of the new connections and kept them waiting for its start-up."""
    port = _free_port()
    begun, release = tmp_path / "begun", tmp_path / "release"
    ready = _serve_one("slow_start:named", port, {"START_NAME": "ready"})
    starting = _serve_one(
        "slow_start:held",
        port,
        {"START_NAME": "late", "START_BEGUN": str(begun), "START_RELEASE": str(release)},
    )
    try:
        for _ in range(600):  # both processes have bound the port, one is still starting
            if begun.exists() and _answers(port, 1) == ["ready"]:
                break
            time.sleep(0.1)
        assert begun.exists()
        while_starting = _answers(port, 40)
        release.touch()
        after = []
        for _ in range(100):  # the late process answers once started
            after += _answers(port, 5)
            if "late" in after:
                break
    finally:
        for process in (ready, starting):
            process.terminate()
            process.join(30)
    # Without the change, 40 connections hashed over two listening sockets all missing the
    # starting one would happen once in ~10^12 runs.
    assert while_starting == ["ready"] * 40
    assert "late" in after
