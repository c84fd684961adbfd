"""`errkb serve --workers N`: N server processes, each with a listening socket of its own.

uvicorn's own workers share one listening socket. Every worker waits on it, and the one that
wakes first takes the connections that arrived meanwhile: measured under `wrk` with 16
keep-alive connections and 4 workers, one process did nearly all the work (5 s of CPU against
under 1 s for each of the others), so four processes served no more than one. Here each process
binds the port itself with SO_REUSEPORT, and the kernel spreads new connections over the
processes' sockets evenly (by a hash of each connection's addresses and ports).

The parent binds the port first, without listening (a socket that does not listen gets no
connections), so a port in use fails at once in one line. It restarts a process that dies, and
stops them all on SIGINT or SIGTERM.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import time
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

from errkb.core.errors import ConfigError

log = logging.getLogger("uvicorn.error")
BACKLOG = 2048  # uvicorn's default
RESTART_PAUSE = 1.0  # seconds between restarts of a process that keeps dying


def reuseport_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) with SO_REUSEPORT, not yet listening.

    Made with `IPPROTO_TCP` named: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    connections whose socket says so, and a socket made with the default protocol 0 does not.
    With Nagle on, a response written in two parts waited for the client's delayed ACK: every
    request of `errkb serve --workers N` took 40 ms more (bench/serve.py: 360 requests/s and a
    44 ms p50 at 4 processes, for errkb and the baseline alike).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def serve_one(app_factory: str, host: str, port: int, options: dict[str, Any]) -> None:
    """One server process: its own socket on the shared port, the app built from the factory.

    The socket is bound here but listens only once the app has started (uvicorn's server calls
    `listen` after the app's startup, which builds the matcher's index). A socket listening
    earlier was given its share of the new connections while its process was still starting:
    those requests waited seconds, behind the start-up, where the ready processes would have
    answered them at once (at 4 processes, a p99 of 600 ms in the first second after the first
    process answered). The same holds for a process started again after one died.
    """
    import uvicorn

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us with SIGTERM
    sock = reuseport_socket(host, port)
    config = uvicorn.Config(app_factory, factory=True, backlog=BACKLOG, **options)
    uvicorn.Server(config).run(sockets=[sock])


def _held_port(host: str, port: int) -> socket.socket:
    """The port, bound for the processes to share; ConfigError when anything else has it.

    A plain bind first: with SO_REUSEPORT alone, a second `errkb serve` on the same port would
    quietly share the connections with the first instead of failing.
    """
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
        return reuseport_socket(host, port)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another --port)"
        ) from None


class Stop(Exception):
    """SIGINT or SIGTERM reached the parent."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stop


def serve_processes(
    app_factory: str, host: str, port: int, processes: int, options: dict[str, Any]
) -> None:
    """Run `processes` server processes until SIGINT or SIGTERM, restarting any that dies."""
    import uvicorn

    uvicorn.Config(app_factory, factory=True, **options)  # sets up uvicorn's logging here too
    held = _held_port(host, port)
    spawn = multiprocessing.get_context("spawn")
    args = (app_factory, host, port, options)

    def started() -> BaseProcess:
        process = spawn.Process(target=serve_one, args=args, name="errkb-server")
        process.start()
        return process

    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    running: list[BaseProcess] = []
    try:
        running = [started() for _ in range(processes)]
        log.info("serving on http://%s:%d with %d processes", host, port, processes)
        while True:
            time.sleep(RESTART_PAUSE)
            for i, process in enumerate(running):
                if not process.is_alive():
                    log.warning(
                        "server process %s exited (%s); starting another",
                        process.pid,
                        process.exitcode,
                    )
                    running[i] = started()
    except Stop:
        pass
    finally:
        for process in running:
            process.terminate()
        for process in running:
            process.join(30)
            if process.is_alive():
                process.kill()
        held.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
