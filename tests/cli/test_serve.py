"""`errkb serve` as real processes: several at once on an empty database, `--workers`, the
auto-migration switch, and an ingest seen by the very next request while the server runs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import drop_pg, fresh_pg_url
from doc_marker import MARKER, plant_marker
from knowledge_repo import MAMBA_MESSAGE, SWA_MESSAGE, literal_id
from pages_repo import ingest_pages_repo

# Real `errkb serve` processes, up to four at once (minutes under load): not in `make test-fast`.
pytestmark = pytest.mark.slow

ERRKB = str(Path(sys.executable).parent / "errkb")
START_LIMIT = 180.0  # a generous wait on a loaded machine; never an assertion about speed


@pytest.fixture(params=["sqlite", "postgres"])
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema at all, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"
        return
    url = fresh_pg_url()
    yield url
    drop_pg(url)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(cmd: list[str], url: str, **env: str) -> subprocess.Popen[str]:
    # stderr goes to a file, not a pipe: a server's log must never fill a pipe and stall it.
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            cmd,
            env={**os.environ, "ERRKB_DATABASE_URL": url, **env},
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            start_new_session=True,  # --workers forks: stop the whole group
        )
    return proc


def _serve(url: str, port: int, *args: str, **env: str) -> subprocess.Popen[str]:
    return _start([ERRKB, "serve", "--port", str(port), *args], url, **env)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_healthy(port: int, proc: subprocess.Popen[str]) -> httpx.Response:
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server on port {port} exited {proc.returncode}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
        except httpx.HTTPError:
            time.sleep(0.2)
    pytest.fail(f"server on port {port} did not answer within {START_LIMIT:.0f} s")


def test_four_servers_started_at_once_on_an_empty_database_all_serve(empty_db_url: str) -> None:
    ports = [_free_port() for _ in range(4)]
    procs = [_serve(empty_db_url, port) for port in ports]
    try:
        answers = [_wait_healthy(port, proc) for port, proc in zip(ports, procs, strict=True)]
        snapshots = [httpx.get(f"http://127.0.0.1:{p}/api/snapshots", timeout=10) for p in ports]
    finally:
        for proc in procs:
            _stop(proc)
    assert [a.status_code for a in answers] == [200] * 4
    assert [s.json() for s in snapshots] == [[]] * 4


def test_serve_workers_4_on_an_empty_database_serves_what_is_ingested(
    empty_db_url: str, tmp_path: Path
) -> None:
    port = _free_port()
    proc = _serve(empty_db_url, port, "--workers", "4")
    try:
        assert _wait_healthy(port, proc).status_code == 200
        ingest_pages_repo(empty_db_url, tmp_path)
        swa = literal_id(SWA_MESSAGE)
        # Four requests on fresh connections: whichever worker answers, it serves the entry.
        answers = [httpx.get(f"http://127.0.0.1:{port}/api/errors/{swa}") for _ in range(4)]
    finally:
        _stop(proc)
    assert [a.status_code for a in answers] == [200] * 4
    assert {a.json()["message"] for a in answers} == {SWA_MESSAGE}


def test_uvicorn_factory_with_four_workers_serves(empty_db_url: str) -> None:
    port = _free_port()
    uvicorn = str(Path(sys.executable).parent / "uvicorn")
    cmd = [uvicorn, "--factory", "errkb.service.app:create_app", "--workers", "4"]
    proc = _start([*cmd, "--port", str(port)], empty_db_url)
    try:
        assert _wait_healthy(port, proc).status_code == 200
        answers = [httpx.get(f"http://127.0.0.1:{port}/api/snapshots") for _ in range(4)]
    finally:
        _stop(proc)
    assert [a.status_code for a in answers] == [200] * 4


def test_without_auto_migration_a_schema_behind_stops_the_server_with_one_line(
    empty_db_url: str,
) -> None:
    out = subprocess.run(
        [ERRKB, "serve", "--port", str(_free_port())],
        env={**os.environ, "ERRKB_DATABASE_URL": empty_db_url, "ERRKB_AUTO_MIGRATE": "false"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    err = out.stderr
    assert out.returncode not in (0, None)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "schema is behind" in lines[0] and "errkb db upgrade" in lines[0]


def test_without_auto_migration_a_current_schema_serves(db_url: str) -> None:
    port = _free_port()
    proc = _serve(db_url, port, ERRKB_AUTO_MIGRATE="false")  # db_url is migrated to head
    try:
        assert _wait_healthy(port, proc).status_code == 200
    finally:
        _stop(proc)


def test_next_get_after_an_ingest_shows_the_new_snapshot(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path, versions=(1, 2))
    port = _free_port()
    proc = _serve(db_url, port)
    mamba = literal_id(MAMBA_MESSAGE)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(port, proc)
        with httpx.Client(base_url=base) as client:
            before = client.get(f"/api/errors/{mamba}")
            again = client.get(f"/api/errors/{mamba}")  # answered from the cache
            page_before = client.get(f"/errors/{mamba}")
            ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))
            after = client.get(f"/api/errors/{mamba}")
            page_after = client.get(f"/errors/{mamba}")
            revalidated = client.get(
                f"/api/errors/{mamba}", headers={"If-None-Match": before.headers["etag"]}
            )
    finally:
        _stop(proc)
    assert before.json()["snapshot"] == again.json()["snapshot"] == "v2"
    assert after.status_code == 200 and after.json()["snapshot"] == "v3"
    assert "v3" in [p["snapshot"] for p in after.json()["provenance"]]
    assert "v3" not in page_before.text and "v3" in page_after.text
    assert after.headers["etag"] != before.headers["etag"]
    assert revalidated.status_code == 200 and revalidated.json()["snapshot"] == "v3"


def test_a_server_reading_entry_docs_shows_the_next_ingest_at_once(
    db_url: str, tmp_path: Path
) -> None:

    from errkb.core.settings import Settings
    from errkb.service.entries.docs import materialize_entries

    ingest_pages_repo(db_url, tmp_path, versions=(1, 2))
    materialize_entries(Settings(database_url=db_url), processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)  # so a doc read shows, and a stale doc served would too
    port = _free_port()
    proc = _serve(db_url, port)
    try:
        _wait_healthy(port, proc)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            before = client.get(f"/api/errors/{mamba}")
            ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))
            after = client.get(f"/api/errors/{mamba}")
            page_after = client.get(f"/errors/{mamba}")
    finally:
        _stop(proc)
    assert before.json()["title"] == MARKER and before.json()["snapshot"] == "v2"
    assert after.json()["snapshot"] == "v3" and after.json()["title"] != MARKER
    assert "v3" in page_after.text and MARKER not in page_after.text


def _docs_current(url: str) -> tuple[int, int]:
    from errkb.core.db import make_engine, session_factory
    from errkb.service.status.state import docs_status

    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            state = docs_status(session)
    finally:
        engine.dispose()
    return state.current, state.entries


def test_a_running_server_builds_the_docs_an_ingest_beside_it_left(
    db_url: str, tmp_path: Path
) -> None:
    """`errkb ingest` of a new release beside a running server leaves docs out of date (those
    the release only lengthened); the server notices at its next look and builds them."""
    from errkb.core.settings import Settings
    from errkb.service.entries.docs import materialize_entries

    ingest_pages_repo(db_url, tmp_path, versions=(1, 2))
    materialize_entries(Settings(database_url=db_url), processes=1)
    port = _free_port()
    proc = _serve(db_url, port, ERRKB_SERVE_DOCS_CHECK_SECONDS="0.5", ERRKB_WORKERS="1")
    try:
        _wait_healthy(port, proc)
        ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))  # no docs built
        current, entries = _docs_current(db_url)
        assert current < entries  # v3 left docs out of date
        deadline = time.monotonic() + 120
        while _docs_current(db_url)[0] < entries and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _docs_current(db_url) == (entries, entries)
    finally:
        _stop(proc)
