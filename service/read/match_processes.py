"""Matching in processes of their own, so the server's event loop never waits for it.

Matching a 1 MiB body is about a second of pure-Python CPU work. In a thread it holds the GIL,
and the event loop, the health check and every page then wait for their turn: with 16 such
requests at once, /healthz took 0.3-1.2 s. In a separate process (`ERRKB_MATCH_PROCESSES`, one
by default; see `match_worker`) it competes only for a core.

The server talks to each process over a socket pair read by its event loop (`match_link`): a
request is one write, its answer one read, with no thread in between. (A `ProcessPoolExecutor`
hands each task through a manager thread, a queue feeder thread and two wake-up pipes: profiled
under a load of short texts, that hand-off was most of the server's own time per match.) A
process that dies fails the matches it held with a 503 and is started again for the next one.
After an ingest commits, a process answers no match from its older index (`StaleIndex`): a
fresh one is started in its place, the request is asked again there once its index is built,
and the old one ends when it has answered what it held. A match right after an ingest waits
for that index (seconds), and is never answered from what the database held before.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from errkb.core.errors import BadInput, Unavailable
from errkb.service.read.match_link import Worker
from errkb.service.read.match_worker import StaleIndex
from errkb.service.read.matches import MatchOut

log = logging.getLogger(__name__)


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
        cache_dir: Path | None = None,
    ) -> None:
        # cache_dir: where the processes keep their index for the next start (`index_file`).
        self._args = (
            database_url,
            refresh_seconds,
            nice,
            None if cache_dir is None else str(cache_dir),
        )
        self._processes = processes
        self._workers: list[Worker] = []
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

    def _start(self) -> Worker:
        # forkserver: each process forks from a clean interpreter that already imported the
        # matcher, instead of re-importing everything (spawn) or copying a threaded server.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["errkb.service.read.match_worker"])
        worker = Worker(context, self._args)
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

    async def _worker(self) -> Worker:
        """The live process with the fewest answers owed, a dead one started again."""
        if len(self._workers) < self._processes:
            await asyncio.to_thread(self.warm)
        loop = asyncio.get_running_loop()
        worker = min(self._workers, key=lambda w: (not w.usable_from(loop), len(w.pending)))
        if not worker.usable_from(loop):
            worker = await asyncio.to_thread(self._replace, worker)
        return worker

    def _replace(self, old: Worker) -> Worker:
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

    def _renew_in_background(self, stale: Worker) -> None:
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
        started = time.monotonic()
        for _ in range(self._processes + 2):  # each stale process is replaced once
            worker = await self._worker()
            found = await worker.call(request)
            if not isinstance(found, StaleIndex):
                break
            await asyncio.to_thread(self._replace, worker)  # a no-op if replaced meanwhile
        else:
            raise Unavailable("the matcher is rebuilding its index; try again", retry_after=1)
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
