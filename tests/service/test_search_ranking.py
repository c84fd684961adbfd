"""Search ranked by relevance on SQLite and PostgreSQL: the code a server runs before the
project's own tests, flags by any of their names, unknown filters named, and a message-less
assert listed by its condition, through `search_errors` and the MCP tool alike."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp.client import Client
from pages_repo import XSS_MESSAGE, ingest_pages_repo
from ranking_repo import ingest_ranking_repo
from test_mcp import connected

from errkb.core.db import make_engine, session_factory
from errkb.service.search.queries import search_errors


def _search(url: str, **kw: str) -> tuple[list[tuple[str, bool]], list[str]]:
    engine = make_engine(url)
    try:
        with session_factory(engine)() as s:
            found = search_errors(s, limit=20, **kw)  # type: ignore[arg-type]
            return [(h.message, h.test_code) for h in found.items], found.notes
    finally:
        engine.dispose()


def test_server_code_before_test_code_and_unknown_filters_named(
    db_url: str, tmp_path: Path
) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")
    hits, notes = _search(db_url, q="out of memory")
    # The test's fake reads more of the words, and sorts first by message: still last.
    assert [test for _, test in hits] == [False, True] and notes == []
    assert hits[0][0] == "CUDA out of memory. Tried to allocate {size}"
    assert _search(db_url, exception="NopeError") == (
        [],
        ["No ingested error is of the class NopeError or derived from it."],
    )

    async def check(client: Client) -> None:
        got = await client.call_tool("search_errors", {"query": "Allocator"})
        items = got.structured_content["items"]
        assert [i["message"] == "" for i in items] == [False, True]  # a message first
        assert items[1]["title"].startswith("assert self.free_pages >= 0")
        line = got.content[0].text.splitlines()[2]
        assert "AssertionError: assert self.free_pages >= 0" in line and "srv/alloc.py:" in line
        oom = await client.call_tool("search_errors", {"query": "out of memory"})
        assert "(test code)" in oom.content[0].text.splitlines()[2]

    async def main() -> None:
        async with connected(db_url, tmp_path) as client:
            await check(client)

    anyio.run(main)


def test_a_flag_is_found_by_any_of_its_names(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    primary, notes = _search(db_url, flag="--tp-size")
    assert XSS_MESSAGE in [m for m, _ in primary] and notes == []
    for name in ("tp-size", "tp_size", "  --tp-size "):
        assert _search(db_url, flag=name) == (primary, []), name
    short, notes = _search(db_url, flag="--tp")
    assert short == primary
    assert notes == [
        "No ingested version defines the flag --tp; it abbreviates --tp-size, searched instead."
    ]
    assert _search(db_url, flag="--no-such-flag") == (
        [],
        ["No ingested version defines the flag --no-such-flag."],
    )

    async def check(client: Client) -> None:
        got = await client.call_tool("search_errors", {"flag": "tp_size"})  # no query
        assert not got.is_error
        assert XSS_MESSAGE in [h["message"] for h in got.structured_content["items"]]
        unknown = await client.call_tool("search_errors", {"flag": "--no-such-flag"})
        assert unknown.content[0].text.startswith(
            "No ingested version defines the flag --no-such-flag."
        )

    async def main() -> None:
        async with connected(db_url, tmp_path) as client:
            await check(client)

    anyio.run(main)
