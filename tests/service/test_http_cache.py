"""HTTP caching of the JSON API and pages: validators, 304s, HEAD, and the per-version cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from knowledge_repo import MAMBA_MESSAGE, literal_id
from pages_repo import ingest_pages_repo

from errkb.core.db import make_engine, session_factory
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.entries.cache import EntryCache
from errkb.service.queries import KeyWatch, bump_ai_generation, kb_key

GETS = ["/api/errors/{id}", "/api/errors?q=mamba", "/api/snapshots", "/errors/{id}", "/", "/flags/"]


def _calls(url: str, calls: list[tuple[str, str, dict[str, str]]]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        app = create_app(Settings(database_url=url, public_url="https://docs.example.org"))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return [await client.request(m, p, headers=h) for m, p, h in calls]

    return asyncio.run(run())


def test_head_answers_200_with_the_get_headers(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path)
    paths = [p.format(id=literal_id(MAMBA_MESSAGE)) for p in [*GETS, "/healthz"]]
    answers = _calls(db_url, [(m, p, {}) for p in paths for m in ("GET", "HEAD")])
    for path, get, head in zip(paths, answers[::2], answers[1::2], strict=True):
        assert get.status_code == head.status_code == 200, path
        assert head.content == b"", path
        for name in ("etag", "last-modified", "cache-control", "content-type", "content-length"):
            assert head.headers.get(name) == get.headers.get(name), (path, name)


def test_json_api_revalidates_like_the_pages(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path)
    paths = [p.format(id=literal_id(MAMBA_MESSAGE)) for p in GETS[:3]]
    first = _calls(db_url, [("GET", p, {}) for p in paths])
    for resp in first:
        assert resp.headers["cache-control"].startswith("public")
        assert resp.headers["etag"] and resp.headers["last-modified"]
    again = _calls(
        db_url,
        [
            ("GET", p, {"If-None-Match": r.headers["etag"]})
            for p, r in zip(paths, first, strict=True)
        ]
        + [
            ("GET", p, {"If-Modified-Since": r.headers["last-modified"]})
            for p, r in zip(paths, first, strict=True)
        ],
    )
    assert [r.status_code for r in again] == [304] * 6
    assert all(r.content == b"" for r in again)
    ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))
    after = _calls(
        db_url,
        [
            ("GET", p, {"If-None-Match": r.headers["etag"]})
            for p, r in zip(paths, first, strict=True)
        ],
    )
    assert [r.status_code for r in after] == [200] * 3


def test_unknown_ids_answer_json_on_the_api_and_html_on_pages(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path)
    api, page, module = _calls(
        db_url,
        [
            ("GET", "/api/errors/0000000000000000", {}),
            ("GET", "/errors/0000000000000000", {}),
            ("GET", "/modules/no/such.py", {}),
        ],
    )
    assert api.status_code == page.status_code == module.status_code == 404
    assert "0000000000000000" in api.json()["detail"]
    assert page.headers["content-type"].startswith("text/html") and "Not found" in page.text
    assert module.headers["content-type"].startswith("text/html")


def test_stored_ai_prose_moves_the_content_key(engine) -> None:  # type: ignore[no-untyped-def]
    before = kb_key(engine)
    with session_factory(engine)() as session:
        bump_ai_generation(session)
        session.commit()
    assert kb_key(engine) != before


def test_entry_cache_never_serves_another_version() -> None:
    cache = EntryCache(max_bytes=10)
    assert cache.get_or_build("1.0", "a", lambda: b"old") == b"old"
    assert cache.get("1.0", "a") == b"old"
    assert cache.get("2.0", "a") is None  # a new key empties the cache
    cache.put("1.0", "a", b"stale")  # built under the old key, finished late: dropped
    assert cache.get("2.0", "a") is None
    cache.put("2.0", "a", b"12345")
    cache.put("2.0", "b", b"123456")  # past 10 bytes: the least recently used goes
    assert cache.get("2.0", "a") is None and cache.get("2.0", "b") == b"123456"


def test_sqlite_and_postgres_keys_start_at_zero(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        assert kb_key(engine) == "0.0"
    finally:
        engine.dispose()


def test_the_key_watch_sees_every_commit_and_survives_a_lost_connection(db_url: str) -> None:
    engine = make_engine(db_url)
    watch = KeyWatch(engine)
    try:
        assert watch.key() == kb_key(engine) == "0.0"
        for expected in ("0.1", "0.2"):  # another connection commits: seen at once, each time
            with session_factory(engine)() as session:
                bump_ai_generation(session)
                session.commit()
            assert watch.key() == expected
        lost = watch._conn  # noqa: SLF001 - the test breaks the watch's own connection
        lost.close()
        with session_factory(engine)() as session:
            bump_ai_generation(session)
            session.commit()
        assert watch.key() == "0.3"  # a fresh connection, the current key
        assert watch._conn is not lost  # noqa: SLF001
    finally:
        watch.close()
        engine.dispose()
