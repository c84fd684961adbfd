"""`errkb watch --once` against a package index served here (the simple API, PEP 691 JSON):
a new release is ingested and served by a running server without a restart, an unchanged index
costs nothing, and an index that answers 500 or times out is one line, with nothing lost."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from local_index import LocalIndex, serving, wheel_bytes
from sqlalchemy import select
from typer.testing import CliRunner

from errkb.core.db import make_engine
from errkb.core.models import Snapshot
from errkb.core.settings import Settings
from errkb.ingest.sources.index import client
from errkb.ingest.sources.simple import simple_releases, version_of
from errkb.service.app import create_app
from errkb.service.cli.main import app

PINS = """[[repos]]
name = "tests/tiny"
pypi_name = "tiny"
releases = ["1.0"]
"""


def _wheel(version: str) -> bytes:
    tag = version.replace(".", "_")
    body = (
        "def check(n):\n    if n < 0:\n        raise ValueError(f'n must be >= 0, got {n}')\n"
        f"def only_{tag}():\n    raise ValueError('introduced in {version}')\n"
    )
    return wheel_bytes({"tiny/core.py": body.encode()})


@pytest.fixture
def index(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A local index with tiny 1.0, and settings pointing `errkb watch` at it."""
    served = LocalIndex()
    served.add("tiny", "1.0", "tiny-1.0-py3-none-any.whl", _wheel("1.0"))
    pins = tmp_path / "pins.toml"
    pins.write_text(PINS)
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_PINS_FILE", str(pins))
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ERRKB_WORKERS", "1")
    monkeypatch.setenv("ERRKB_INDEX_TIMEOUT_SECONDS", "1")
    monkeypatch.setenv("ERRKB_INDEX_URL", "http://127.0.0.1:9/pypi")  # never asked by watch
    with serving(served):
        monkeypatch.setenv("PIP_INDEX_URL", served.simple_url)  # pip's own setting is followed
        yield served


def _watch_once():  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["watch", "--once"], catch_exceptions=False)


def _labels(db_url: str) -> list[str]:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        labels = conn.execute(select(Snapshot.label).order_by(Snapshot.sort_key)).scalars().all()
    engine.dispose()
    return list(labels)


def test_watch_once_ingests_new_releases_and_survives_a_failing_index(
    index: LocalIndex, db_url: str
) -> None:
    first = _watch_once()
    assert first.exit_code == 0, first.output
    assert "Ingested tests/tiny 1.0" in first.output
    assert _labels(db_url) == ["1.0"]

    async def scenario() -> None:
        app = create_app(Settings(database_url=db_url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                before = await http.get("/api/snapshots")
                assert [s["label"] for s in before.json()] == ["1.0"]

                # Nothing new: nothing downloaded, nothing stored.
                asked = len(index.files_downloaded())
                same = _watch_once()
                assert same.exit_code == 0 and "no new release" in same.output
                assert len(index.files_downloaded()) == asked and _labels(db_url) == ["1.0"]

                # The index fails (HTTP 500, then too slow to answer): one line each, exit 1,
                # and the knowledge base and the server's answers stay as they were.
                index.add("tiny", "1.1", "tiny-1.1-py3-none-any.whl", _wheel("1.1"))
                index.failing = 500
                broken = _watch_once()
                assert broken.exit_code == 1 and "HTTP 500" in broken.output
                assert "Traceback" not in broken.output
                index.failing, index.delay = 0, 3.0
                slow = _watch_once()
                assert slow.exit_code == 1 and "did not answer" in slow.output
                assert _labels(db_url) == ["1.0"]
                still = await http.get(
                    "/api/snapshots", headers={"If-None-Match": before.headers["ETag"]}
                )
                assert still.status_code == 304

                # The index recovers: the new release is ingested, and the running server
                # serves it at once under a new ETag.
                index.delay = 0.0
                recovered = _watch_once()
                assert recovered.exit_code == 0 and "Ingested tests/tiny 1.1" in recovered.output
                after = await http.get(
                    "/api/snapshots", headers={"If-None-Match": before.headers["ETag"]}
                )
                assert after.status_code == 200
                assert [s["label"] for s in after.json()] == ["1.0", "1.1"]
                found = await http.get("/api/errors", params={"q": "introduced in 1.1"})
                assert found.status_code == 200 and "introduced in 1.1" in found.text

    asyncio.run(scenario())


def test_a_release_that_cannot_be_read_is_retried_and_costs_no_other(
    index: LocalIndex, db_url: str
) -> None:
    index.add("tiny", "1.1", "tiny-1.1-py3-none-any.whl", _wheel("1.1"), sha256="0" * 64)
    index.add("tiny", "1.2", "tiny-1.2-py3-none-any.whl", _wheel("1.2"))
    partly = _watch_once()
    assert partly.exit_code == 1 and "does not match the sha256" in partly.output
    assert _labels(db_url) == ["1.0", "1.2"]
    index.releases["tiny"]["1.1"] = []
    index.add("tiny", "1.1", "tiny-1.1-py3-none-any.whl", _wheel("1.1"))  # fixed upstream
    again = _watch_once()
    assert again.exit_code == 0 and "Ingested tests/tiny 1.1" in again.output
    assert _labels(db_url) == ["1.0", "1.1", "1.2"]


def test_the_simple_api_lists_releases_from_json_and_from_html() -> None:
    served = LocalIndex()
    served.add("tiny", "1.0", "tiny-1.0-py3-none-any.whl", _wheel("1.0"))
    served.add("tiny", "1.0", "tiny-1.0.tar.gz", b"sdist")
    with serving(served), client() as http:
        from_json = simple_releases(http, served.simple_url, "Tiny")
        served.html = True
        from_html = simple_releases(http, served.simple_url, "Tiny")
    assert from_json == from_html
    files = from_json["1.0"]
    assert sorted(f.filename for f in files) == ["tiny-1.0-py3-none-any.whl", "tiny-1.0.tar.gz"]
    base = served.simple_url.removesuffix("/simple") + "/files/"
    assert all(f.url.startswith(base) and len(f.sha256) == 64 for f in files)
    assert version_of("sglang-0.5.23-py3-none-any.whl") == "0.5.23"
    assert version_of("sglang-0.5.23.tar.gz") == "0.5.23"
    assert version_of("README.txt") is None


def _status() -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["status", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_status_and_healthz_count_the_history(index: LocalIndex, db_url: str) -> None:
    assert _watch_once().exit_code == 0
    index.add("tiny", "1.1", "tiny-1.1-py3-none-any.whl", _wheel("1.1"))
    (project,) = _status()["projects"]
    assert project["releases"] == 1 and project["newest_release"] == "1.0"
    assert project["newest_on_index"] == "1.1" and project["last_label"] == "1.0"
    assert project["last_seconds"] > 0
    docs = _status()["docs"]
    assert docs["entries"] == 2 and docs["all_current"] and docs["last_rebuilt"] == 2

    text = CliRunner().invoke(app, ["status"], catch_exceptions=False).output
    assert "1 release held, newest 1.0; newest on the index: 1.1" in text
    assert "Entry documents: all current (2 entries)" in text

    # 1.1: every entry changes (a new occurrence, "not raised since 1.1", a new error).
    assert _watch_once().exit_code == 0
    (project,) = _status()["projects"]
    assert project["releases"] == 2 and project["last_label"] == "1.1"
    docs = _status()["docs"]
    assert docs["entries"] == 3 and docs["all_current"]
    assert docs["last_rebuilt"] == 3 and docs["last_kept"] == 0

    async def health() -> dict:  # type: ignore[type-arg]
        server = create_app(Settings(database_url=db_url))
        async with server.router.lifespan_context(server):
            transport = httpx.ASGITransport(app=server)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                return (await http.get("/healthz")).json()  # type: ignore[no-any-return]

    knowledge = asyncio.run(health())["knowledge"]
    assert knowledge["snapshots"] == 2 and knowledge["newest"] == {"tests/tiny": "1.1"}
    assert knowledge["entries"] == 3 and knowledge["docs_current"] == 3
