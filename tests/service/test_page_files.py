"""Rendered pages shared by a server's processes: files only this user can write, named by what
the page shows, removed once their content key has gone idle."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import httpx
import pytest
from pages_repo import ingest_pages_repo

from errkb.core.db import make_engine, session_factory
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.entries.docs import materialize_entries
from errkb.service.entries.queries import entry_error_ids
from errkb.service.pages import routes
from errkb.service.pages.page_files import PageFiles


def test_a_page_one_process_rendered_is_read_by_another(tmp_path: Path) -> None:
    one, other = PageFiles("sqlite:///kb", tmp_path), PageFiles("sqlite:///kb", tmp_path)
    assert one.get("1.0", ("page", "a")) is None
    one.put("1.0", ("page", "a"), b"<html>a</html>")
    assert other.get("1.0", ("page", "a")) == b"<html>a</html>"
    assert other.get("1.0", ("page", "b")) is None  # another question
    assert other.get("2.0", ("page", "a")) is None  # another content key
    assert PageFiles("sqlite:///other", tmp_path).get("1.0", ("page", "a")) is None


def test_folders_of_other_keys_go_once_idle(tmp_path: Path) -> None:
    files = PageFiles("sqlite:///kb", tmp_path)
    files.put("1.0", "a", b"one")
    files.put("2.0", "a", b"two")  # a process that has not seen the ingest may still write 1.0
    assert PageFiles("sqlite:///kb", tmp_path).get("1.0", "a") == b"one"
    (old,) = [p for p in next(tmp_path.iterdir()).iterdir() if p.name.endswith("-1.0")]
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    PageFiles("sqlite:///kb", tmp_path).put("3.0", "a", b"three")
    assert not old.exists()
    assert PageFiles("sqlite:///kb", tmp_path).get("2.0", "a") == b"two"  # not idle yet


def test_a_folder_others_can_write_is_not_used(tmp_path: Path) -> None:
    planted = PageFiles("sqlite:///kb", tmp_path)
    planted.put("1.0", "a", b"<script>planted</script>")
    shared = next(tmp_path.iterdir())
    shared.chmod(0o777)  # as if another user had made it for us
    files = PageFiles("sqlite:///kb", tmp_path)
    assert files.get("1.0", "a") is None
    files.put("1.0", "b", b"page")
    assert files.get("1.0", "b") is None


def test_server_processes_share_rendered_pages(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    settings = Settings(database_url=db_url, data_dir=tmp_path)
    materialize_entries(settings)
    engine = make_engine(db_url)
    try:
        with session_factory(engine)() as session:
            ids = entry_error_ids(session)[:3]
    finally:
        engine.dispose()
    monkeypatch.setattr(
        "errkb.service.pages.page_files.tempfile.gettempdir", lambda: str(tmp_path / "tmp")
    )
    (tmp_path / "tmp").mkdir()

    def pages() -> list[httpx.Response]:
        async def run() -> list[httpx.Response]:
            app = create_app(settings)  # one server process
            async with app.router.lifespan_context(app):
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                    return [await c.get(f"/errors/{i}") for i in ids]

        return asyncio.run(run())

    first = pages()
    assert all(r.status_code == 200 for r in first)

    def no_rendering(*_: object, **__: object) -> str:
        raise AssertionError("rendered again")

    monkeypatch.setattr(routes, "render_entry", no_rendering)
    second = pages()  # a second process: the pages the first rendered, byte for byte
    assert [r.content for r in second] == [r.content for r in first]
