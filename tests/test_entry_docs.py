"""Entry docs: built after an ingest, served while current, never served stale, rebuilt when
missing; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import zlib
from pathlib import Path

import httpx
import pytest
from knowledge_repo import MAMBA_MESSAGE, literal_id
from pages_repo import ingest_pages_repo
from sqlalchemy import delete, select, update

from errkb.core.db import make_engine, session_factory
from errkb.core.models import EntryDoc
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.entries import docs
from errkb.service.entries.docs import entry_json, materialize_entries, settings_variant
from errkb.service.entries.queries import entry_error_ids
from errkb.service.queries import kb_key


def _settings(url: str) -> Settings:
    return Settings(database_url=url)


def _gets(url: str, paths: list[str]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        app = create_app(_settings(url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return [await client.get(p) for p in paths]

    return asyncio.run(run())


def _docs(url: str) -> dict[str, tuple[str, bytes]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(EntryDoc.error_id, EntryDoc.content_key, EntryDoc.body))
            return {i: (k, zlib.decompress(b)) for i, k, b in rows}
    finally:
        engine.dispose()


MARKER = "A title no build produces"


def plant_marker(url: str, error_id: str, **values: str) -> None:
    """Give one doc a marker title (and other `values`): served only if the doc is read."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            stored = conn.execute(
                select(EntryDoc.body).where(EntryDoc.error_id == error_id)
            ).scalar_one()
            entry = {**json.loads(zlib.decompress(stored)), "title": MARKER}
            body = zlib.compress(json.dumps(entry).encode())
            where = EntryDoc.error_id == error_id
            conn.execute(update(EntryDoc).where(where).values(body=body, **values))
    finally:
        engine.dispose()


def test_every_entry_is_built_as_a_request_would_build_it(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path)
    done = materialize_entries(_settings(db_url), processes=1)
    engine = make_engine(db_url)
    with session_factory(engine)() as session:
        ids = entry_error_ids(session)
        built = {i: entry_json(session, i, _settings(db_url)) for i in ids}
    key = kb_key(engine)
    engine.dispose()
    stored = _docs(db_url)
    assert len(ids) > 5 and done.entries == len(ids) and not done.skipped
    assert done.compressed_bytes == sum(len(zlib.compress(b, docs.LEVEL)) for b in built.values())
    assert {i: (key, b) for i, b in built.items()} == stored
    again = materialize_entries(_settings(db_url), processes=1)
    assert again.skipped and again.entries == len(ids)


def test_a_current_doc_is_served_and_a_stale_one_never(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)
    served, page = _gets(db_url, [f"/api/errors/{mamba}", f"/errors/{mamba}"])
    assert served.json()["title"] == MARKER  # read from the doc, not built
    assert MARKER in page.text  # the page renders from the doc too

    ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))  # the key moves on
    after, page_after = _gets(db_url, [f"/api/errors/{mamba}", f"/errors/{mamba}"])
    assert after.status_code == 200 and after.json()["snapshot"] == "v3"
    assert after.json()["title"] != MARKER
    assert page_after.status_code == 200 and "v3" in page_after.text
    assert MARKER not in page_after.text


def test_a_doc_of_other_settings_or_a_missing_one_is_built_on_demand(
    db_url: str, tmp_path: Path
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    other = settings_variant(Settings(public_url="https://elsewhere.example.org"))
    plant_marker(db_url, mamba, variant=other)
    (served,) = _gets(db_url, [f"/api/errors/{mamba}"])
    assert served.status_code == 200 and served.json()["id"] == mamba
    assert served.json()["title"] != MARKER

    engine = make_engine(db_url)
    with engine.begin() as conn:
        conn.execute(delete(EntryDoc))
    with session_factory(engine)() as session:
        expected = json.loads(entry_json(session, mamba, _settings(db_url)))
    engine.dispose()
    (rebuilt,) = _gets(db_url, [f"/api/errors/{mamba}"])
    assert rebuilt.json() == expected


def test_chunks_built_while_an_ingest_commits_are_not_written(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setattr(docs, "kb_key_of", lambda session: "moved on")
    done = materialize_entries(_settings(db_url), processes=1)
    assert done.entries == 0 and done.abandoned >= 1
    assert _docs(db_url) == {}
