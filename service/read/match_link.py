"""One match process, seen from the server: the process, its socket pair, the answers it owes.

The server sends each request as one frame (a 4-byte big-endian length, then a pickle: the
framing of `multiprocessing.Connection`, which the process reads with) and the event loop reads
the answers in the order of the requests (`Answers`). `MatchProcesses` starts, replaces and
retires these.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
from collections import deque
from typing import Any, cast

from errkb.core.errors import Unavailable
from errkb.service.read import match_worker

START_SECONDS = 600.0  # building the index of a whole history takes a minute at most
HEAD = match_worker.HEAD
_GONE = "the matcher stopped while it held this text; send it again"


class Answers(asyncio.Protocol):
    """The server's end of one match process's socket pair, read by the event loop: requests
    go out as one write each, answers come back in order and settle the futures waiting for
    them. (A stream reader and writer took coroutine steps per answer and per request: about
    5% of the server's profiled time per short match.)"""

    def __init__(self, worker: Worker) -> None:
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
        while len(buffer) >= HEAD.size:
            (size,) = HEAD.unpack_from(buffer)
            end = HEAD.size + size
            if len(buffer) < end:
                break
            payload = bytes(buffer[HEAD.size : end])
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
        self._transport.write(HEAD.pack(len(payload)) + payload)
        if self._room is not None:
            await self._room

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class Worker:
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
        self._answers: Answers | None = None
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

    async def _attach(self) -> Answers:
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
        transport, answers = await loop.create_connection(lambda: Answers(self), sock=sock)
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
