"""Matching in processes of their own, so the server's event loop never waits for it.

Matching a 1 MiB body is about a second of pure-Python CPU work. In a thread it holds the GIL,
and the event loop, the health check and every page then wait for their turn: with 16 such
requests at once, /healthz took 0.3-1.2 s. In a separate process (`ERRKB_MATCH_PROCESSES`, one
by default; see `match_worker`) it competes only for a core.

The server talks to each process over a socket pair read by its event loop: a request is one
write, its answer one read, with no thread in between. (A `ProcessPoolExecutor` hands each task
through a manager thread, a queue feeder thread and two wake-up pipes: profiled under a load of
short texts, that hand-off was most of the server's own time per match.) A process that dies
fails the matches it held with a 503 and is started again for the next one. After an ingest, a
process says its index is stale; a fresh one is started beside it, takes the next requests once
its index is built, and the old one ends when it has answered what it held.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import pickle
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from errkb.core.errors import BadInput, Unavailable
from errkb.service.read import match_worker
from errkb.service.read.matches import MatchOut

START_SECONDS = 600.0  # building the index of a whole history takes a minute at most
_HEAD = struct.Struct("!i")  # multiprocessing.Connection's frame header
_GONE = "the matcher stopped while it held this text; send it again"
log = logging.getLogger(__name__)


class _Answers(asyncio.Protocol):
    """The server's end of one match process's socket pair, read by the event loop: requests
    go out as one write each, answers come back in order and settle the futures waiting for
    them. (A stream reader and writer cost two coroutine steps per answer and one per request:
    a tenth of the server's own time per short match.)"""

    def __init__(self, worker: _Worker) -> None:
        self._worker = worker
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._room: asyncio.Future[None] | None = None  # set while the socket's buffer is full

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop may call this after `create_connection` returned: `_connect` binds it too.
        # (uvloop's Unix transports are not registered as `asyncio.Transport`.)
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        pending = self._worker.pending
        while len(buffer) >= _HEAD.size:
            (size,) = _HEAD.unpack_from(buffer)
            end = _HEAD.size + size
            if len(buffer) < end:
                break
            payload = bytes(buffer[_HEAD.size : end])
            del buffer[:end]
            answer = pending.popleft()
            if not answer.done():  # else its request was cancelled (the client went away)
                answer.set_result(payload)

    def connection_lost(self, exc: Exception | None) -> None:
        self._worker.fail_pending()
        if self._room is not None and not self._room.done():
            self._room.set_result(None)

    def pause_writing(self) -> None:
        self._room = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._room is not None and not self._room.done():
            self._room.set_result(None)
        self._room = None

    async def send(self, payload: bytes) -> None:
        """One frame out; waits while the process has more unread than the buffer holds."""
        assert self._transport is not None
        self._transport.write(_HEAD.pack(len(payload)) + payload)
        if self._room is not None:
            await self._room

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class _Worker:
    """One match process and the answers it owes, in the order they were asked."""

    def __init__(self, context: Any, args: tuple[Any, ...]) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=match_worker.serve, args=(child, *args, os.getpid()), name="errkb-match"
        )
        self.process.start()
        child.close()
        self.pending: deque[asyncio.Future[bytes]] = deque()
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop that reads the answers
        self._answers: _Answers | None = None
        self._attached: asyncio.Task[None] | None = None
        self.dead = False
        self.stale = False  # its index is older than the database: a fresh process replaces it

    def ready(self) -> None:
        """Wait until the process has built its index (blocking: before any request)."""
        try:
            said = self.conn.recv_bytes() if self.conn.poll(START_SECONDS) else b""
        except (EOFError, OSError):  # it died while building
            said = b""
        if said != match_worker.READY:
            raise Unavailable("the matcher did not start; try again in a minute", retry_after=60)

    def usable_from(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Alive, and read by `loop` or by no loop yet (an app started again runs a new one)."""
        return not self.dead and self.loop in (None, loop)

    def call_blocking(self, request: tuple[Any, ...]) -> Any:
        """A round trip on the plain connection (only before the event loop reads it)."""
        self.conn.send_bytes(pickle.dumps(request, protocol=5))
        stale, found = pickle.loads(self.conn.recv_bytes())
        self.stale = self.stale or stale
        return found

    def call_from_thread(self, request: tuple[Any, ...]) -> Any:
        """A round trip from a thread other than the event loop's."""
        if self.loop is None:
            return self.call_blocking(request)
        return asyncio.run_coroutine_threadsafe(self.call(request), self.loop).result()

    async def drain_then_stop(self) -> None:
        """End the process once it has answered every request it holds."""
        while self.pending and not self.dead:
            await asyncio.sleep(0.05)
        await asyncio.to_thread(self.stop)

    async def call(self, request: tuple[Any, ...]) -> Any:
        """A round trip through the event loop; answers arrive in the order of the requests."""
        answers = self._answers
        if answers is None:
            answers = await self._attach()
        if self.dead:
            raise Unavailable(_GONE, retry_after=1)
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.pending.append(answer)
        await answers.send(pickle.dumps(request, protocol=5))
        stale, found = pickle.loads(await answer)
        self.stale = self.stale or stale
        return found

    async def _attach(self) -> _Answers:
        """The first call: the running loop starts reading the answers (once, however many
        calls arrive meanwhile)."""
        if self._attached is None:
            loop = asyncio.get_running_loop()
            self.loop = loop
            self._attached = loop.create_task(self._connect(loop))
        await self._attached
        assert self._answers is not None
        return self._answers

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> None:
        sock = socket.socket(fileno=os.dup(self.conn.fileno()))
        sock.setblocking(False)
        transport, answers = await loop.create_connection(lambda: _Answers(self), sock=sock)
        answers.connection_made(transport)
        self._answers = answers

    def fail_pending(self) -> None:
        """The process is gone: every answer it owed fails with a 503."""
        self.dead = True
        while self.pending:
            answer = self.pending.popleft()
            if not answer.done():
                answer.set_exception(Unavailable(_GONE, retry_after=1))

    def stop(self) -> None:
        """End the process (what it held is dropped)."""
        self.dead = True
        answers = self._answers
        if answers is not None and self.loop is not None and not self.loop.is_closed():
            if _in_thread_of(self.loop):
                answers.close()
            else:
                self.loop.call_soon_threadsafe(answers.close)
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


def _in_thread_of(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class MatchProcesses:
    """The match processes of one app, and the bound on the matches it holds.

    At most `queue_limit` matches are held at once (bodies being read, queued or matching); one
    more is refused with `Unavailable` (503, with a Retry-After estimated from the recent
    matching time) before its body is read, so memory and waiting times stay bounded.
    """

    def __init__(
        self,
        database_url: str,
        *,
        refresh_seconds: float,
        processes: int = 1,
        nice: int = 0,
        queue_limit: int = 16,
    ) -> None:
        self._args = (database_url, refresh_seconds, nice)
        self._processes = processes
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()  # the list of processes
        self._renewing = threading.Lock()  # one fresh process started at a time
        self._closed = False
        self.queue_limit = queue_limit
        self.held = 0  # matches admitted and not yet answered
        self._seconds = 1.0  # recent time of one match (moving average), for Retry-After

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place for one match for the block, or refuse it when every place is taken."""
        if self.held >= self.queue_limit:
            wait = max(1, math.ceil(self._seconds * self.held / self._processes))
            raise Unavailable(
                f"the server is already matching {self.held} texts, as many as it takes at once; "
                f"send this one again in about {wait} seconds",
                retry_after=wait,
            )
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1

    def _start(self) -> _Worker:
        # forkserver: each process forks from a clean interpreter that already imported the
        # matcher, instead of re-importing everything (spawn) or copying a threaded server.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["errkb.service.read.match_worker"])
        worker = _Worker(context, self._args)
        try:
            worker.ready()
        except BaseException:
            worker.stop()
            raise
        return worker

    def warm(self) -> None:
        """Start the processes and wait until their index is built (the app is then ready)."""
        with self._lock:
            while len(self._workers) < self._processes:
                self._workers.append(self._start())

    async def _worker(self) -> _Worker:
        """The live process with the fewest answers owed, a dead one started again."""
        if len(self._workers) < self._processes:
            await asyncio.to_thread(self.warm)
        loop = asyncio.get_running_loop()
        worker = min(self._workers, key=lambda w: (not w.usable_from(loop), len(w.pending)))
        if not worker.usable_from(loop):
            worker = await asyncio.to_thread(self._replace, worker)
        return worker

    def _replace(self, old: _Worker) -> _Worker:
        """Start a process in `old`'s place (blocking; in a thread), then retire `old`: at once
        when it is dead or read by no live loop, else once it has answered what it holds."""
        with self._renewing:
            if old in self._workers:  # else replaced meanwhile
                fresh = self._start()
                with self._lock:
                    if self._closed:
                        fresh.stop()
                        raise Unavailable("the server is stopping", retry_after=1)
                    self._workers[self._workers.index(old)] = fresh
                if old.dead or old.loop is None or old.loop.is_closed():
                    old.stop()
                else:
                    asyncio.run_coroutine_threadsafe(old.drain_then_stop(), old.loop)
        with self._lock:
            return next((w for w in self._workers if not w.dead), self._workers[0])

    def _renew_in_background(self, stale: _Worker) -> None:
        """A fresh process for a stale one; the stale one answers until it is ready."""

        def renew() -> None:
            try:
                self._replace(stale)
            except Exception:  # the stale process keeps answering; the next answer tries again
                log.exception("a fresh match process could not be started")
                stale.stale = False

        if not self._renewing.locked():
            threading.Thread(target=renew, name="errkb-match-renew", daemon=True).start()

    async def match(
        self, body: bytes, content_type: str, *, limit: int, public_url: str
    ) -> list[MatchOut]:
        """The matches of a request body (text, or JSON `{"text": ...}`), best first."""
        return list(await self._ask("match", body, content_type, limit, public_url))

    async def match_json(
        self, body: bytes, content_type: str, *, limit: int, public_url: str
    ) -> bytes:
        """The same as the API's JSON body (`MatchResponse`), serialized by the match process:
        the server only forwards the bytes (unpickling the models and serializing them again
        was half of the server's own time per short match)."""
        found: bytes = await self._ask("match_json", body, content_type, limit, public_url)
        return found

    async def _ask(self, *request: Any) -> Any:
        worker = await self._worker()
        started = time.monotonic()
        found = await worker.call(request)
        # Time from submission, queueing included, divided by the matches it waited for: the
        # share of one match, as seen by the server.
        seconds = (time.monotonic() - started) * self._processes / max(1, self.held)
        self._seconds = 0.8 * self._seconds + 0.2 * seconds
        if worker.stale and worker in self._workers:
            self._renew_in_background(worker)
        if isinstance(found, BadInput):
            raise BadInput(found.message, loc=("body",))
        if isinstance(found, Exception):
            raise found
        return found

    def wait(self) -> None:
        """Check every process now and wait until a stale one's fresh process has taken over
        (from a thread other than the event loop's, or before the loop reads the processes)."""
        self.warm()
        for worker in list(self._workers):
            worker.call_from_thread(("check",))
            if worker.stale:
                self._replace(worker)

    def close(self) -> None:
        """Stop the processes, if started; the matches they held are dropped."""
        with self._lock:
            workers, self._workers = self._workers, []
            self._closed = True
        for worker in workers:
            worker.stop()
