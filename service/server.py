"""How `errkb serve` runs uvicorn: httptools' parser, one send per answer, and a deadline for
every request.

uvicorn parses HTTP with h11 (pure Python) unless httptools (llhttp, in C) is installed; measured
with `bench/serve.py` at 1 process and 64 connections, the minimal app answered 4,667 req/s on
h11 and 6,074 on httptools with uvloop. errkb depends on both, and runs httptools' protocol.

uvicorn writes an answer's head and its body apart: two `send` calls, and on loopback each one
runs the whole TCP path, receiver's side included (30% of a cached search's samples in
`py-spy`). `OneSendPerAnswer` sends them together: the search at 1 process and 64 connections
went from 5,959 to 6,810 req/s (p50 10.3 to 8.6 ms).

uvicorn (0.55) has no timeout for reading a request: a client sending one byte a second holds
its connection, and the keep-alive timer is cancelled by every byte received. With a few hundred
such clients ("slowloris") the server runs out of sockets. `DeadlineHttpToolsProtocol` gives
each request, from its first byte to the end of its body, `ERRKB_REQUEST_TIMEOUT_SECONDS`, and
then closes the connection; the time the application takes to answer is not counted.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from errkb.core.settings import Settings


class OneSendPerAnswer:
    """The connection's transport, holding a fixed-length answer's head until its body comes, so
    both leave in one `send`.

    uvicorn writes an answer's status line and headers, then its body: two system calls, each
    running the loopback's whole TCP path. Only the first write of an answer is held, and only
    when it is a whole head with a Content-Length (no streamed answer waits for its first chunk);
    the next write, the end of the answer, or `close` sends it.
    """

    __slots__ = ("_transport", "_head", "_first")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head: bytes | None = None
        self._first = True  # the next write is an answer's first

    def write(self, data: bytes) -> None:
        """Send `data`, after a held head; or hold it if it is a fixed-length answer's head."""
        if self._head is not None:
            data, self._head = self._head + data, None
        elif self._first and not data.startswith(b"HTTP/1.1 1"):
            self._first = False
            if data.endswith(b"\r\n\r\n") and b"\r\ncontent-length: " in data:
                self._head = data
                return
        self._transport.write(data)

    def answered(self) -> None:
        """The answer is complete: send what is held (a HEAD's head), and wait for the next."""
        self._first = True
        if self._head is not None:
            head, self._head = self._head, None
            if not self._transport.is_closing():
                self._transport.write(head)

    def close(self) -> None:
        """Send what is held, then close."""
        self.answered()
        self._transport.close()

    def is_closing(self) -> bool:
        """The transport's own answer (asked several times per request: no `__getattr__`)."""
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class DeadlineHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing a connection whose request is not received in time."""

    # Set by `server_options`; a process uvicorn spawns reads it from the settings instead.
    request_timeout: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request."""
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving = False  # between a request's first byte and the end of its body
        self._sending = OneSendPerAnswer(transport)
        super().connection_made(self._sending)  # type: ignore[arg-type]
        self._arm()

    def on_message_begin(self) -> None:
        """A request starts (the clock already runs since the connection or the last answer)."""
        super().on_message_begin()
        self._receiving = True

    def on_message_complete(self) -> None:
        """Stop the clock once the whole request (headers and body) is in."""
        super().on_message_complete()
        self._receiving = False
        self._disarm()

    def on_response_complete(self) -> None:
        """Restart the clock for the next request, unless it is already in and waiting."""
        waiting = bool(self.pipeline) and not self._receiving
        self._sending.answered()
        super().on_response_complete()
        if not self.transport.is_closing() and not waiting:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(_timeout(), self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.logger.info("closing a connection whose request took over %.0f s", _timeout())
            self.transport.close()


def _timeout() -> float:
    if DeadlineHttpToolsProtocol.request_timeout is None:
        DeadlineHttpToolsProtocol.request_timeout = Settings().request_timeout_seconds
    return DeadlineHttpToolsProtocol.request_timeout


def server_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run`: the deadline protocol, uvloop and the keep-alive
    limit."""
    DeadlineHttpToolsProtocol.request_timeout = settings.request_timeout_seconds
    return {
        "http": DeadlineHttpToolsProtocol,
        "loop": "uvloop",
        "timeout_keep_alive": settings.keep_alive_seconds,
    }
