"""The entry page puts what to do second: the solutions and the example fix come right after
what the error means, then when it happens, the source and the history; an error of the
project's own tests says so at the top."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from knowledge_repo import SWA_MESSAGE, literal_id
from pages_repo import ingest_pages_repo
from ranking_repo import ingest_ranking_repo

from errkb.core.db import make_engine, session_factory
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.search.queries import search_errors

ORDER = ["message", "meaning", "solutions", "example-fix", "when", "source", "timeline"]


def _page(url: str, path: str) -> str:
    async def get() -> str:
        app = create_app(Settings(database_url=url))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                response = await client.get(path)
                assert response.status_code == 200
                return response.text

    return asyncio.run(get())


def test_solutions_and_the_example_fix_follow_what_it_means(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    html = _page(db_url, f"/errors/{literal_id(SWA_MESSAGE)}")
    at = [html.index(f'<section id="{section}"') for section in ORDER]
    assert at == sorted(at)
    when = html[at[4] : at[5]]
    assert "The raise needs all of these:" in when  # the conditions follow what to do
    assert "Test code:" not in html


def test_a_test_entry_says_it_is_test_code(db_url: str, tmp_path: Path) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        hits = search_errors(s, q="out of memory").items
    engine.dispose()
    test_hit = next(h for h in hits if h.test_code)
    assert not all(h.test_code for h in hits)
    html = _page(db_url, f"/errors/{test_hit.id}")
    meaning = html[html.index('<section id="meaning"') : html.index('<section id="solutions"')]
    assert "Test code:</strong> raised only in acme/ranked's own tests" in meaning
    entry = _page(db_url, f"/api/errors/{test_hit.id}")
    assert '"test_code":true' in entry.replace(" ", "")


def test_the_search_page_marks_test_code_and_names_an_unknown_flag(
    db_url: str, tmp_path: Path
) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")
    hits = _page(db_url, "/?q=out+of+memory")
    assert hits.count('<span class="badge">test code</span>') == 1
    first, second = hits.split('<li class="hit">')[1:3]
    assert "test code" not in first and "test code</span>" in second  # server code first
    unknown = _page(db_url, "/?flag=--no-such-flag")
    assert '<p class="note">No ingested version defines the flag --no-such-flag.</p>' in unknown
