"""Entry docs: built after an ingest, served while current, never served stale, rebuilt when
missing; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from doc_marker import MARKER, plant_marker
from knowledge_repo import MAMBA_MESSAGE, literal_id
from pages_repo import ingest_pages_repo
from sqlalchemy import delete, insert, select
from typer.testing import CliRunner

from errkb.core import packed
from errkb.core.db import make_engine, session_factory
from errkb.core.dictionaries import unpack_stored
from errkb.core.models import EntryDoc, PackDictionary
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.cli.main import app as cli
from errkb.service.docstore import workers as doc_workers
from errkb.service.entries import docs
from errkb.service.entries.docs import entry_json, materialize_entries, settings_variant
from errkb.service.entries.queries import entry_error_ids
from errkb.service.pages.export import export_site
from errkb.service.queries import kb_key


def _settings(url: str) -> Settings:
    return Settings(database_url=url)


def _gets(url: str, paths: list[str], settings: Settings | None = None) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        app = create_app(settings or _settings(url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return [await client.get(p) for p in paths]

    return asyncio.run(run())


def _docs(url: str) -> dict[str, tuple[str, bytes | None]]:
    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            rows = session.execute(select(EntryDoc.error_id, EntryDoc.content_key, EntryDoc.body))
            return {i: (k, unpack_stored(session, b)) for i, k, b in rows.all()}
    finally:
        engine.dispose()


def _dictionaries(url: str) -> dict[int, str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(PackDictionary.id, PackDictionary.purpose))
            return {i: p for i, p in rows}
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
    assert done.json_bytes == sum(len(b) for b in built.values())
    assert {i: (key, b) for i, b in built.items()} == stored
    again = materialize_entries(_settings(db_url), processes=1)
    assert again.skipped and again.entries == 0 and again.kept == len(ids)


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


def test_pages_use_the_docs_when_a_public_url_is_set(db_url: str, tmp_path: Path) -> None:
    """With ERRKB_PUBLIC_URL (or a preferred AI model) set, the docs are built for those
    settings, and the page reads the same doc as the JSON, not one of a variant never built."""
    ingest_pages_repo(db_url, tmp_path)
    public = Settings(
        database_url=db_url, public_url="https://errors.example.org", llm_model="some-model"
    )
    materialize_entries(public, processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)
    served, page = _gets(db_url, [f"/api/errors/{mamba}", f"/errors/{mamba}"], public)
    assert served.json()["title"] == MARKER
    assert page.status_code == 200 and MARKER in page.text  # the page read the doc too
    assert 'href="https://errors.example.org/errors/' in page.text  # its canonical link


def test_errkb_show_reads_the_doc_the_api_serves(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`errkb show` answers through the same read side as the API: the current doc, else a
    build, under the environment's settings."""
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_PUBLIC_URL", "https://errors.example.org")
    materialize_entries(Settings(), processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)
    shown = CliRunner().invoke(cli, ["show", mamba], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["title"] == MARKER
    (served,) = _gets(db_url, [f"/api/errors/{mamba}"], Settings())
    assert json.loads(shown.output) == served.json()

    ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))  # the doc is stale now
    rebuilt = CliRunner().invoke(cli, ["show", mamba], catch_exceptions=False)
    entry = json.loads(rebuilt.output)
    assert entry["title"] != MARKER and entry["snapshot"] == "v3"
    assert entry["page_url"] == f"https://errors.example.org/errors/{mamba}"


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


def test_the_export_writes_the_current_doc_and_builds_a_stale_one(
    db_url: str, tmp_path: Path
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)  # no public URL: the export's links
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)
    engine = make_engine(db_url)
    for site in (tmp_path / "site", tmp_path / "after"):
        with session_factory(engine)() as session:
            export_site(session, site, workers=1)
        ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))  # the doc is stale now
    engine.dispose()
    exported = json.loads((tmp_path / "site" / "errors" / f"{mamba}.json").read_text())
    assert exported["title"] == MARKER  # read from the doc, not built
    rebuilt = json.loads((tmp_path / "after" / "errors" / f"{mamba}.json").read_text())
    assert rebuilt["title"] != MARKER and rebuilt["snapshot"] == "v3"
    assert MARKER not in (tmp_path / "after" / "errors" / f"{mamba}.html").read_text()


def test_chunks_built_while_an_ingest_commits_are_not_written(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setattr(doc_workers, "kb_key_of", lambda session: "moved on")
    done = materialize_entries(_settings(db_url), processes=1)
    assert done.entries == 0 and done.abandoned >= 1
    assert _docs(db_url) == {}


def test_docs_are_packed_with_a_dictionary_trained_on_the_build(
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forget_dictionaries: Callable[[], None],
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setattr(docs, "TRAIN_ON", 4)  # the test repo has a dozen entries, not thousands
    monkeypatch.setattr(packed, "MIN_SAMPLES", 4)
    first = materialize_entries(_settings(db_url), processes=1)
    (first_dict,) = _dictionaries(db_url).items()
    assert first_dict[1] == "entry_docs"
    stored = _docs(db_url)
    engine = make_engine(db_url)
    with engine.connect() as conn:
        bodies = conn.execute(select(EntryDoc.body)).scalars().all()
    engine.dispose()
    assert {packed.dictionary_of(b) for b in bodies} == {first_dict[0]}
    assert first.compressed_bytes == sum(len(b) for b in bodies) < first.json_bytes

    # The next ingest's build packs with the stored dictionary and drops the doc of an error
    # that has no entry now; only a forced (full) build trains again and drops the older one.
    engine = make_engine(db_url)
    with engine.begin() as conn:
        orphan = {"error_id": "0" * 16, "content_key": "old", "variant": "old", "body": b"x"}
        conn.execute(insert(EntryDoc).values(**orphan))
    engine.dispose()
    ingest_pages_repo(db_url, tmp_path / "next", versions=(3,))
    incremental = materialize_entries(_settings(db_url), processes=1)
    assert incremental.entries > 0 and incremental.dropped == 1
    assert _dictionaries(db_url) == dict([first_dict])
    assert "0" * 16 not in _docs(db_url)
    materialize_entries(_settings(db_url), processes=1, force=True)
    (second_dict,) = _dictionaries(db_url)
    assert second_dict != first_dict[0]
    engine = make_engine(db_url)
    with session_factory(engine)() as session:
        key = kb_key(engine)
        stored = {
            i: (key, entry_json(session, i, _settings(db_url))) for i in entry_error_ids(session)
        }
    engine.dispose()
    assert _docs(db_url) == stored  # every entry's JSON as built now, and no doc of the lost error

    # A server that has never seen the dictionary loads it from the database.
    forget_dictionaries()  # a new server
    mamba = literal_id(MAMBA_MESSAGE)
    (served,) = _gets(db_url, [f"/api/errors/{mamba}"])
    assert served.status_code == 200 and served.content == stored[mamba][1]


def test_a_doc_whose_dictionary_is_gone_is_built_again(
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    forget_dictionaries: Callable[[], None],
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setattr(docs, "TRAIN_ON", 4)
    monkeypatch.setattr(packed, "MIN_SAMPLES", 4)
    materialize_entries(_settings(db_url), processes=1)
    mamba = literal_id(MAMBA_MESSAGE)
    plant_marker(db_url, mamba)  # served only while its doc is read
    engine = make_engine(db_url)
    with engine.begin() as conn:  # every other doc still names the deleted dictionary
        conn.execute(delete(PackDictionary))
    engine.dispose()
    forget_dictionaries()  # a new server
    other = next(i for i in _docs(db_url) if i != mamba)
    marked, rebuilt = _gets(db_url, [f"/api/errors/{mamba}", f"/api/errors/{other}"])
    assert marked.json()["title"] == MARKER  # a plain zstd doc needs no dictionary
    assert rebuilt.status_code == 200 and rebuilt.json()["id"] == other


def test_a_build_overtaken_by_a_newer_ingest_drops_nothing(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    engine = make_engine(db_url)
    with engine.begin() as conn:  # a doc the newer build would own
        body = packed.Packer(None).pack(b"{}")
        other = {"error_id": "0" * 16, "content_key": "newer", "variant": "v", "body": body}
        conn.execute(insert(EntryDoc).values(**other))
    engine.dispose()
    real = doc_workers.kb_key_of
    calls: list[int] = []

    def key_of(session):  # type: ignore[no-untyped-def]
        calls.append(1)  # the chunk's check sees the build's key; the final one a newer key
        return real(session) if len(calls) == 1 else "newer"

    monkeypatch.setattr(doc_workers, "kb_key_of", key_of)
    done = materialize_entries(_settings(db_url), processes=1)
    assert done.entries > 5 and len(calls) == 2
    assert "0" * 16 in _docs(db_url)  # left alone


def _threaded(monkeypatch: pytest.MonkeyPatch, routes: Any) -> list[object]:
    """What `routes` hands to a worker thread from now on: each call's third argument."""
    threaded: list[object] = []
    real = routes.run_in_threadpool

    async def counted(func: Callable[..., bytes], *args: object) -> bytes:
        threaded.append(args[2])
        return await real(func, *args)

    monkeypatch.setattr(routes, "run_in_threadpool", counted)
    return threaded


def test_a_stored_doc_is_read_on_the_event_loop_on_sqlite_only(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first read of an entry in a process: one local row on SQLite, read without the hop to
    a worker thread (the first may still load the pack dictionary there); a network round trip
    on PostgreSQL, kept off the event loop."""
    from errkb.service.entries import routes

    monkeypatch.setattr(packed, "MIN_SAMPLES", 4)  # the docs packed with a trained dictionary
    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)
    assert _dictionaries(db_url)
    ids = sorted(_docs(db_url))[:3]
    stored = _docs(db_url)
    # A process that starts knows no pack dictionary: it loads them as it starts, so that even
    # its first read needs no session (before, the first went to a worker thread to load it).
    monkeypatch.setattr(packed, "_dictionaries", {})
    threaded = _threaded(monkeypatch, routes)  # entry_json(request, key, error_id, snapshot)
    served = _gets(db_url, [f"/api/errors/{i}" for i in ids])
    assert [r.status_code for r in served] == [200] * 3
    assert [r.content for r in served] == [stored[i][1] for i in ids]
    assert [str(a) for a in threaded] == ([] if db_url.startswith("sqlite") else ids)


def test_a_page_another_process_rendered_is_read_on_the_event_loop_on_sqlite_only(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second server process (here a second app on the same database) reads the page the
    first rendered without a worker thread on SQLite; renders stay off the event loop."""
    from errkb.service.pages import routes

    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)
    ids = sorted(_docs(db_url))[:2]
    threaded = _threaded(monkeypatch, routes)  # _entry_html(request, key, item)
    first = _gets(db_url, [f"/errors/{i}" for i in ids])
    assert len(threaded) == 2  # rendered once, in a worker thread
    threaded.clear()
    second = _gets(db_url, [f"/errors/{i}" for i in ids])
    assert [r.status_code for r in second] == [200, 200]
    assert [r.content for r in second] == [r.content for r in first]
    assert len(threaded) == (0 if db_url.startswith("sqlite") else 2)


def test_a_page_another_process_rendered_is_not_rendered_again_before_its_dictionary_is_known(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A doc packed with a dictionary this process has not loaded (one an ingest trained after
    the process started) is read in a worker thread, which loads it; the page another process
    rendered from that doc is then served, not rendered again (a first render in a process
    cost 100 ms more than the next ones)."""
    from errkb.service import app as app_module
    from errkb.service.pages import routes

    monkeypatch.setattr(packed, "MIN_SAMPLES", 4)  # the docs packed with a trained dictionary
    ingest_pages_repo(db_url, tmp_path)
    materialize_entries(_settings(db_url), processes=1)
    assert _dictionaries(db_url)
    ids = sorted(_docs(db_url))[:2]
    first = _gets(db_url, [f"/errors/{i}" for i in ids])
    monkeypatch.setattr(packed, "_dictionaries", {})
    monkeypatch.setattr(app_module, "load_all", lambda session: 0)  # learnt after the start
    rendered: list[str] = []
    real = routes.render_entry

    def counted(entry: Any, **kwargs: Any) -> str:
        rendered.append(entry.id)
        return real(entry, **kwargs)

    monkeypatch.setattr(routes, "render_entry", counted)
    second = _gets(db_url, [f"/errors/{i}" for i in ids])
    assert [r.status_code for r in second] == [200, 200]
    assert [r.content for r in second] == [r.content for r in first]
    assert rendered == []
    assert packed._dictionaries  # loaded on the way
