"""Matching in a process of its own, so the server's event loop never waits for it.

Matching a 1 MiB body is about a second of pure-Python CPU work. In a thread it holds the GIL,
and the event loop, the health check and every page then wait for their turn: with 16 such
requests at once, /healthz took 0.3-1.2 s. In a separate process (`ERRKB_MATCH_PROCESSES`, one
by default) it competes only for a core. The process builds and refreshes its own index of the
database (`LiveIndex`), ends with the server however the server dies (`core.lifeline`), and hands
back response models, never the index's objects.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

from errkb.core.db import make_engine
from errkb.core.errors import BadInput, Unavailable
from errkb.core.lifeline import exit_with
from errkb.core.priority import lower_priority
from errkb.service.match.matcher.live import LiveIndex
from errkb.service.read.matches import MatchOut, live_index, matches_in, text_of

_live: LiveIndex | None = None  # in the match process only


def _start(database_url: str, refresh_seconds: float, nice: int, parent: int) -> None:
    global _live
    exit_with(parent)
    lower_priority(nice)
    _live = live_index(make_engine(database_url), refresh_seconds=refresh_seconds)


def _ready() -> None:
    """A task that does nothing: submitting it starts the process and builds its index."""


def _match(
    body: bytes, content_type: str, limit: int, public_url: str
) -> list[MatchOut] | BadInput:
    assert _live is not None
    try:
        text = text_of(body, content_type)
    except BadInput as exc:  # returned, not raised: its `loc` would not survive pickling
        return exc
    return matches_in(_live.current(), text, limit=limit, public_url=public_url)


def _wait(timeout: float) -> None:
    assert _live is not None
    _live.current()  # notice a new generation now, whatever the refresh period
    _live.wait(timeout)


class MatchProcesses:
    """The pool of match processes of one app, and the bound on the matches it holds.

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
        self._started: ProcessPoolExecutor | None = None
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

    @property
    def _pool(self) -> ProcessPoolExecutor:
        if self._started is None:
            # forkserver: each process forks from a clean interpreter that already imported the
            # matcher, instead of re-importing everything (spawn) or copying a threaded server.
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["errkb.service.read.match_processes"])
            self._started = ProcessPoolExecutor(
                max_workers=self._processes,
                mp_context=context,
                initializer=_start,
                initargs=(*self._args, os.getpid()),
            )
        return self._started

    def warm(self) -> None:
        """Start the processes and wait until their index is built (the app is then ready)."""
        for _ in range(self._processes):
            self._pool.submit(_ready).result()

    async def match(
        self, body: bytes, content_type: str, *, limit: int, public_url: str
    ) -> list[MatchOut]:
        """The matches of a request body (text, or JSON `{"text": ...}`), best first."""
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        found = await loop.run_in_executor(
            self._pool, _match, body, content_type, limit, public_url
        )
        # Time from submission, queueing included, divided by the matches it waited for: the
        # share of one match, as seen by the server.
        seconds = (time.monotonic() - started) * self._processes / max(1, self.held)
        self._seconds = 0.8 * self._seconds + 0.2 * seconds
        if isinstance(found, BadInput):
            raise BadInput(found.message, loc=("body",))
        return found

    def wait(self, timeout: float | None = None) -> None:
        """Wait until a rebuild of the index the processes use, if one is due, has finished."""
        self._pool.submit(_wait, timeout or 60.0).result()

    def close(self) -> None:
        """Stop the processes, if started; queued matches are dropped."""
        if self._started is not None:
            self._started.shutdown(wait=False, cancel_futures=True)
            self._started = None
