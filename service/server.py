"""How `errkb serve` runs uvicorn: with a deadline for every request, against slow clients.

uvicorn (0.55) has no timeout for reading a request: a client sending one byte a second holds
its connection, and the keep-alive timer is cancelled by every byte received. With a few hundred
such clients ("slowloris") the server runs out of sockets. `DeadlineH11Protocol` gives each
request, from its first byte to the end of its body, `ERRKB_REQUEST_TIMEOUT_SECONDS`, and then
closes the connection; the time the application takes to answer is not counted.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from errkb.core.settings import Settings

_RECEIVED = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request is not received in time."""

    # Set by `server_options`; a process uvicorn spawns reads it from the settings instead.
    request_timeout: float | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request."""
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def handle_events(self) -> None:
        """Stop the clock once the whole request (headers and body) is in."""
        super().handle_events()
        if self.conn.their_state in _RECEIVED:
            self._disarm()

    def on_response_complete(self) -> None:
        """Restart the clock for the next request on this connection."""
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
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
    if DeadlineH11Protocol.request_timeout is None:
        DeadlineH11Protocol.request_timeout = Settings().request_timeout_seconds
    return DeadlineH11Protocol.request_timeout


def server_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run`: the deadline protocol and the keep-alive limit."""
    DeadlineH11Protocol.request_timeout = settings.request_timeout_seconds
    return {"http": DeadlineH11Protocol, "timeout_keep_alive": settings.keep_alive_seconds}
