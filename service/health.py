"""`/healthz`: liveness and the database's state, answered on the event loop at no cost.

A health check is polled often, and it must answer while matches and page renders keep the
server busy. A database round trip per check would run in the threadpool, behind the renders
(`bench/soak.py` shows the difference). So the app keeps one `DatabaseWatch`, which makes a
round trip every `ERRKB_HEALTH_CHECK_SECONDS` in a thread of its own, and /healthz answers from
its last result:
200 when that round trip succeeded, 503 when it failed or when a round trip has waited
`silence_limit` seconds for its answer (a database that hangs). The answer is thus about one
check period old at most, and a flood of health checks costs the database nothing. The same
thread reads the knowledge base's state (`knowledge_summary`) every `KB_STATE_SECONDS`, and
/healthz carries it: snapshots, newest release, last ingest, entries and current docs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from fastapi import APIRouter, FastAPI, Request
from pydantic import BaseModel, Field

from errkb.core.errors import Unavailable
from errkb.core.settings import Settings
from errkb.service.read.status import EMPTY_KB, knowledge_summary, ping

log = logging.getLogger("errkb.health")
KB_STATE_SECONDS = 10.0

router = APIRouter()


class Knowledge(BaseModel):
    """The knowledge base in a few fields (`knowledge_summary`), refreshed every few seconds."""

    snapshots: int
    newest: dict[str, str | None]
    last_ingest: str | None
    entries: int
    docs_current: int


class Health(BaseModel):
    """A healthy server's answer (the same bytes between two refreshes, so HEAD and GET agree)."""

    status: Literal["ok"]
    empty: bool = Field(description="true while nothing has been ingested: every lookup is a 404")
    detail: str | None = Field(default=None, description="what an operator should know")
    knowledge: Knowledge | None = None


class DatabaseWatch:
    """The outcome of the last database round trip, refreshed in the background."""

    def __init__(
        self, check: Callable[[], None], *, period: float, silence_limit: float | None = None
    ) -> None:
        self._check = check
        self.period = period
        # A database that takes this long to answer is reported down, though it may recover.
        self.silence_limit = silence_limit or max(5.0, 3 * period)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="errkb-health")
        self._ok_at: float | None = None  # time.monotonic() of the last success
        self._failure: str | None = None  # why the last round trip failed, if it did
        self._asked_at: float | None = None  # when the round trip under way began
        self._task: asyncio.Task[None] | None = None

    def check_now(self) -> None:
        """One round trip, in the caller's thread (at start-up)."""
        self._record(self._attempt())

    def start(self) -> None:
        """Keep checking every `period` seconds on the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        """Stop checking; a round trip in progress is left to finish in its thread."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._thread.shutdown(wait=False)

    def problem(self, now: float | None = None) -> str | None:
        """Why the database is not usable now, or None when it is."""
        now = time.monotonic() if now is None else now
        if self._failure is not None:
            return f"the database cannot be used: {self._failure}"
        if self._asked_at is not None and now - self._asked_at > self.silence_limit:
            return f"the database has not answered for over {self.silence_limit:g} seconds"
        if self._ok_at is None:
            return "the database has not been checked yet"
        return None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.period)
            self._asked_at = time.monotonic()
            self._record(await loop.run_in_executor(self._thread, self._attempt))
            self._asked_at = None

    def _attempt(self) -> str | None:
        try:
            self._check()
        except Exception as exc:  # any failure of the database is the answer, not a crash
            log.warning("database health check failed", exc_info=True)
            return f"{type(exc).__name__} (see the server log)"
        return None

    def _record(self, failure: str | None) -> None:
        self._failure = failure
        if failure is None:
            self._ok_at = time.monotonic()


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"description": "The database cannot be used, or does not answer"}},
)
async def healthz(request: Request) -> Health:
    """Liveness, and whether the last database round trip (made every second) succeeded."""
    watch: DatabaseWatch = request.app.state.database_watch
    problem = watch.problem()
    if problem is not None:
        raise Unavailable(problem)
    knowledge = request.app.state.kb_health
    if request.app.state.kb_empty:
        return Health(status="ok", empty=True, detail=EMPTY_KB, knowledge=knowledge)
    return Health(status="ok", empty=False, knowledge=knowledge)


def install_health(app: FastAPI) -> None:
    """Add /healthz (and the snapshot routes) and watch the database while the app runs."""
    app.include_router(router)

    def start(app: FastAPI) -> None:
        settings: Settings = app.state.settings
        sessions = app.state.sessions
        app.state.kb_health = None
        refreshed_at = [float("-inf")]
        refreshed_key: list[str | None] = [None]  # the content key the state was read under

        def check() -> None:
            # Read here, off the event loop, like the round trip; /healthz and 404s use it.
            version = app.state.versions.current()
            with sessions() as session:
                ping(session)
                # The knowledge base's state costs a few counts: read every KB_STATE_SECONDS,
                # and at once when an ingest has moved the content key, so that `empty` and
                # the counts beside it always describe the same knowledge base.
                stale = time.monotonic() - refreshed_at[0] >= KB_STATE_SECONDS
                if stale or refreshed_key[0] != version.key:
                    app.state.kb_health = Knowledge(**knowledge_summary(session))
                    refreshed_at[0], refreshed_key[0] = time.monotonic(), version.key
            app.state.kb_empty = version.last_modified is None

        watch = DatabaseWatch(check, period=settings.health_check_seconds)
        watch.check_now()
        watch.start()
        app.state.database_watch = watch

    def stop(app: FastAPI) -> None:
        app.state.database_watch.stop()

    app.state.startup_hooks.append(start)
    app.state.shutdown_hooks.append(stop)
