"""/healthz: answered on the event loop, and true about the database, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import anyio.to_thread
import httpx
import pytest
from conftest import drop_pg, fresh_pg_url

from errkb.core.db import make_engine, upgrade
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.health import DatabaseWatch
from errkb.service.read.status import EMPTY_KB


def _serve(settings: Settings, scenario: Any) -> Any:
    async def main() -> Any:
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return await scenario(client, app)

    return asyncio.run(main())


def test_healthz_answers_while_every_worker_thread_is_busy(db_url: str, tmp_path: Path) -> None:
    """A page render holding the threadpool must not hold the health check: it never uses it."""
    release = threading.Event()

    async def scenario(client: httpx.AsyncClient, _: Any) -> list[int]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 1
        blocker = asyncio.create_task(anyio.to_thread.run_sync(release.wait))
        await asyncio.sleep(0.1)  # the one worker thread is now taken
        try:
            snapshots = asyncio.create_task(client.get("/api/snapshots"))  # needs the thread
            health = await asyncio.wait_for(client.get("/healthz"), timeout=5)
            head = await asyncio.wait_for(client.head("/healthz"), timeout=5)
            waiting = not snapshots.done()
        finally:
            release.set()
            await blocker
        assert waiting  # the threadpool really was full
        assert (await snapshots).status_code == 200
        assert {k: health.json()[k] for k in ("status", "empty", "detail")} == {
            "status": "ok",
            "empty": True,
            "detail": EMPTY_KB,
        }
        assert head.content == b""
        return [health.status_code, head.status_code]

    assert _serve(Settings(database_url=db_url, data_dir=tmp_path), scenario) == [200, 200]


def _break_database(url: str, tmp_path: Path) -> None:
    """Make the database unusable for new connections, for real."""
    if url.startswith("sqlite"):
        folder = tmp_path / "db"
        shutil.rmtree(folder)
        folder.write_text("a file where the database's folder was")
    else:
        drop_pg(url)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_healthz_reports_a_database_that_went_away(backend: str, tmp_path: Path) -> None:
    if backend == "sqlite":
        (tmp_path / "db").mkdir()
        url = f"sqlite:///{tmp_path / 'db' / 'kb.sqlite3'}"
    else:
        url = fresh_pg_url()
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    settings = Settings(database_url=url, data_dir=tmp_path, health_check_seconds=0.1)

    async def scenario(client: httpx.AsyncClient, app: Any) -> tuple[httpx.Response, ...]:
        before = await client.get("/healthz")
        _break_database(url, tmp_path)
        app.state.engine.dispose()  # pooled connections would hide the loss on SQLite
        started = time.monotonic()
        while time.monotonic() - started < 30:  # a bound for a stuck test, not a timing check
            after = await client.get("/healthz")
            if after.status_code != 200:
                break
            await asyncio.sleep(0.05)
        return before, after

    try:
        before, after = _serve(settings, scenario)
    finally:
        if backend == "postgres":
            drop_pg(url)
    assert before.status_code == 200, before.text
    assert after.status_code == 503, after.text
    assert after.json()["detail"].startswith("the database cannot be used: OperationalError")


def test_a_database_that_hangs_is_reported_after_the_silence_limit() -> None:
    """The watch's own clock: a round trip that never answers turns the answer to 503."""
    answer = threading.Event()

    async def scenario() -> list[str | None]:
        watch = DatabaseWatch(lambda: None, period=0.05, silence_limit=0.5)
        watch.check_now()
        seen = [watch.problem()]
        watch._check = lambda: answer.wait(10)  # the next round trip hangs
        watch.start()
        await asyncio.sleep(0.3)
        seen.append(watch.problem())  # waiting, but not for long yet
        await asyncio.sleep(0.6)
        seen.append(watch.problem())
        answer.set()
        await asyncio.sleep(0.2)
        seen.append(watch.problem())  # answered again: healthy
        watch.stop()
        return seen

    ok, waiting, hung, recovered = asyncio.run(scenario())
    assert ok is None and waiting is None and recovered is None
    assert hung == "the database has not answered for over 0.5 seconds"


def test_openapi_declares_the_503(db_url: str, tmp_path: Path) -> None:
    async def scenario(client: httpx.AsyncClient, _: Any) -> dict[str, Any]:
        return (await client.get("/openapi.json")).json()  # type: ignore[no-any-return]

    spec = _serve(Settings(database_url=db_url, data_dir=tmp_path), scenario)
    responses = spec["paths"]["/healthz"]["get"]["responses"]
    # 422: a query parameter holding a NUL; 500: a crash (service/openapi.py). Never a 304.
    assert set(responses) == {"200", "503", "422", "500"}


def test_healthz_counts_agree_with_empty_right_after_an_ingest(db_url: str, tmp_path: Path) -> None:
    """The knowledge base's fields are read again as soon as an ingest moves the content key,
    not up to 10 s later: `empty: false` never comes with `snapshots: 0`."""
    from pages_repo import ingest_pages_repo

    async def scenario(client: httpx.AsyncClient, app: Any) -> list[dict[str, Any]]:
        before = (await client.get("/healthz")).json()
        await asyncio.to_thread(ingest_pages_repo, db_url, tmp_path / "src")
        watch = app.state.database_watch
        await asyncio.to_thread(watch.check_now)  # the next round trip, without waiting a period
        return [before, (await client.get("/healthz")).json()]

    settings = Settings(database_url=db_url, data_dir=tmp_path)
    before, after = _serve(settings, scenario)
    assert before["empty"] is True and before["knowledge"]["snapshots"] == 0
    assert after["empty"] is False and after["knowledge"]["snapshots"] >= 1, after
