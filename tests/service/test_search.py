"""Full-text search: query semantics, filters, cursors, and identical results on both backends."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import httpx
import pytest
from kb_small import MESSAGES, error_id_of, populate
from sqlalchemy.orm import Session

from errkb.core.db import make_engine, session_factory, upgrade
from errkb.core.search.terms import Phrase, parse_query, terms
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.search.queries import MAX_LIMIT, search_errors

QUERIES = [
    "enable-unified-memory",
    "memory",
    "MEMORY pool",
    '"hybrid mamba"',
    "unif*",
    "cafe resume",
    "script alert",
    "kv_cache_configurator",
    "disaggregation",
    "tp-size",
    "attention heads",
    "valueerror",
    "nothing-matches-this",
]
HOSTILE = [
    '"',
    "*",
    "AND",
    "OR NOT",
    "NEAR(a b)",
    "a' OR '1'='1",
    "{x}:y",
    "col:val",
    "-",
    "\\",
    "ü" * 600,
]


LABELS = ("1.0", "1.1")


def _sorted_ids(
    ids: set[str], phrases: tuple[Phrase, ...] = (), flag: str = "", filtered: bool = True
) -> list[str]:
    """Within a tier: the query's words as a share of the message's (plus one when the error
    involves the flag the query or filter names), a message before none, the newest release
    first, then message and id. With no words and no filter, message and id alone."""
    by_id = {error_id_of(m[0]): m for m in MESSAGES}
    asked = {w for p in phrases for w in p.words} | set(terms(flag))
    named = [flag if flag.startswith("-") else "--" + flag] if flag else []
    named += ["--" + "-".join(p.words) for p in phrases if not flag]

    def key(i: str) -> tuple[float, bool, int, str, str]:
        message, _, _, _, flags, labels = by_id[i]
        if not (phrases or filtered):
            return (0.0, False, 0, message.casefold(), i)
        words = terms(message)
        share = 0.0
        if words:
            share = sum(w in asked for w in words) / math.sqrt(len(words))
            share = round(share / math.sqrt(max(len(asked), 1)), 6)
        bonus = 1.0 if any(n in flags for n in named) else 0.0
        newest = max(LABELS.index(label) for label in labels)
        return (-(share + bonus), not words, -newest, message.casefold(), i)

    return sorted(ids, key=key)


def _contains(words: list[str], phrase: Phrase) -> bool:
    n = len(phrase.words)
    for i in range(len(words) - n + 1):
        head, last = words[i : i + n - 1], words[i + n - 1]
        tail_ok = last.startswith(phrase.words[-1]) if phrase.prefix else last == phrase.words[-1]
        if list(phrase.words[:-1]) == head and tail_ok:
            return True
    return False


def expected(q: str, *, snapshot: str = "", path: str = "", flag: str = "") -> list[str]:
    """An independent model of the search: the query as one phrase in the message, then every
    phrase in the message, then phrases over paths and flags too."""
    phrases = parse_query(q)
    exact = (
        Phrase(tuple(w for p in phrases for w in p.words), phrases[-1].prefix) if phrases else None
    )
    tiers: dict[int, set[str]] = {0: set(), 1: set(), 2: set()}
    for message, exc, file, func, flags, labels in MESSAGES:
        if snapshot and snapshot not in labels:
            continue
        if path and not file.startswith(path):
            continue
        if flag and flag not in flags:
            continue
        msg_words = terms(message)
        meta_words = terms(" ".join([exc, file, func, *sorted(flags)]))
        if all(_contains(msg_words, p) for p in phrases):
            exact_hit = exact is None or _contains(msg_words, exact)
            tiers[0 if exact_hit else 1].add(error_id_of(message))
        elif all(_contains(msg_words, p) or _contains(meta_words, p) for p in phrases):
            tiers[2].add(error_id_of(message))
    filtered = bool(flag)  # a listing without words or flag keeps the index's order
    return [i for t in (0, 1, 2) for i in _sorted_ids(tiers[t], phrases, flag, filtered)]


@pytest.fixture
def session(engine) -> Session:
    with session_factory(engine)() as s:
        populate(s)
        yield s


def test_parse_query_phrases_quotes_and_prefix() -> None:
    assert parse_query("enable-unified-memory tp") == (
        Phrase(("enable", "unified", "memory")),
        Phrase(("tp",)),
    )
    assert parse_query('"Hybrid  Mamba" unif*') == (
        Phrase(("hybrid", "mamba")),
        Phrase(("unif",), prefix=True),
    )
    assert parse_query("Café") == (Phrase(("cafe",)),)
    assert parse_query("*** --- ") == ()
    assert len(parse_query("w " * 1000)) == 12


def test_queries_match_the_model(session: Session) -> None:
    for q in QUERIES:
        got = search_errors(session, q=q, limit=100)
        want = expected(q)
        assert [h.id for h in got.items] == want, q
        assert got.total == len(want), q
        tier0 = set(_tier0(q)) if parse_query(q) else set()
        assert [h.in_message for h in got.items] == [h.id in tier0 for h in got.items], q
    assert any(expected(q) for q in QUERIES) and not expected("nothing-matches-this")


def _tier0(q: str) -> list[str]:
    phrases = parse_query(q)
    return [error_id_of(m[0]) for m in MESSAGES if all(_contains(terms(m[0]), p) for p in phrases)]


FILTERS = [
    ("memory", {"snapshot": "1.1"}),
    ("", {"path": "python/pkg/layers"}),
    ("", {"path": "python/pkg/MemCache"}),
    ("", {"path": "python/pkg/memcache"}),  # paths are case-sensitive on both backends
    ("", {"flag": "--disaggregation-mode"}),
    ("memory", {"flag": "--enable-unified-memory", "snapshot": "1.0"}),
    ("", {"snapshot": "9.9"}),
]


def test_filters_match_the_model(session: Session) -> None:
    for q, filters in FILTERS:
        got = search_errors(session, q=q, limit=100, **filters)
        assert [h.id for h in got.items] == expected(q, **filters), (q, filters)


def test_flag_filter_accepts_the_name_without_dashes(session: Session) -> None:
    a = search_errors(session, flag="disaggregation-mode")
    b = search_errors(session, flag="--disaggregation-mode")
    assert [h.id for h in a.items] == [h.id for h in b.items] != []


def test_cursor_pages_cover_the_full_list_once(session: Session) -> None:
    full = [h.id for h in search_errors(session, q="", limit=100).items]
    assert len(full) == len(MESSAGES)
    paged, cursor = [], None
    while True:
        page = search_errors(session, q="", limit=3, cursor=cursor)
        assert page.total == len(MESSAGES)
        paged += [h.id for h in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert paged == full


def test_hostile_queries_are_plain_words(session: Session) -> None:
    for q in HOSTILE:
        got = search_errors(session, q=q, limit=100)
        assert [h.id for h in got.items] == expected(q), q


def test_hits_say_where_and_when(session: Session) -> None:
    (hit,) = search_errors(session, q='"hybrid mamba"').items
    assert hit.snapshots == ["1.0", "1.1"]
    assert hit.where is not None and hit.where.startswith("python/pkg/mem_cache/")
    assert hit.url == f"/errors/{hit.id}"


def _all_pages(session: Session, limit: int = 50, **kw: str) -> tuple[int, list[str]]:
    ids, cursor, total = [], None, 0
    while True:
        page = search_errors(session, limit=limit, cursor=cursor, **kw)
        total = page.total
        ids += [h.id for h in page.items]
        cursor = page.next_cursor
        if cursor is None:
            return total, ids


def test_small_kb_same_results_on_sqlite_and_postgres(tmp_path: Path, pg_url: str) -> None:
    """The same rows give the same hits, in the same order, page by page, on both databases."""
    from conftest import empty_tables

    results = []
    for url in (f"sqlite:///{tmp_path / 'kb.sqlite3'}", pg_url):
        engine = make_engine(url)
        upgrade(engine)
        if url == pg_url:
            empty_tables(engine)
        with session_factory(engine)() as s:
            populate(s)
            results.append([_all_pages(s, q=q) for q in QUERIES + HOSTILE])
        engine.dispose()
    assert results[0] == results[1]
    assert any(ids for _, ids in results[0])


SGLANG_QUERIES = [
    ("enable-unified-memory", {}),
    ("hybrid swa", {}),
    ("tp size", {}),
    ("must be", {}),
    ("not supported", {"snapshot": "0.5.23"}),
    ("", {"path": "python/sglang/srt/mem_cache/"}),
    ("", {"flag": "--enable-unified-memory"}),
    ("disagg*", {"path": "python/sglang/srt/"}),
    ("attention backend", {"snapshot": "0.5.18"}),
    ('"is not supported"', {}),
]


@pytest.mark.sglang
def test_sglang_same_results_on_sqlite_and_postgres(
    sglang_kb_url: str, sglang_kb_pg_url: str
) -> None:
    """Real data: every query returns the same total and the same ids in the same order, page
    by page (pages of MAX_LIMIT: the small knowledge base above pages by 50). The search index
    is as each ingest kept it up to date (the cached knowledge bases are keyed by errkb/core,
    where its format lives)."""
    per_backend = []
    for url in (sglang_kb_url, sglang_kb_pg_url):
        engine = make_engine(url)
        with session_factory(engine)() as s:
            per_backend.append([_all_pages(s, MAX_LIMIT, q=q, **f) for q, f in SGLANG_QUERIES])
        engine.dispose()
    sqlite_results, pg_results = per_backend
    for (q, f), a, b in zip(SGLANG_QUERIES, sqlite_results, pg_results, strict=True):
        assert a == b, f"{q!r} {f} differs: sqlite {a[0]} hits, postgres {b[0]} hits"
    totals = dict(zip([q for q, _ in SGLANG_QUERIES], [t for t, _ in sqlite_results], strict=True))
    print("sglang search totals:", totals)
    assert totals["enable-unified-memory"] > 0 and totals["must be"] > 100


async def _api(url: str, *paths: str) -> list[httpx.Response]:
    app = create_app(Settings(database_url=url))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return [await client.get(p) for p in paths]


def test_api_search_json_and_cursor(db_url: str) -> None:
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        populate(s)
    engine.dispose()
    first, bad_limit, bad_cursor = asyncio.run(
        _api(db_url, "/api/errors?q=memory&limit=2", "/api/errors?limit=0", "/api/errors?cursor=@@")
    )
    assert first.status_code == 200
    body = first.json()
    assert body["total"] == len(expected("memory"))
    assert [i["id"] for i in body["items"]] == expected("memory")[:2]
    next_page = f"/api/errors?q=memory&limit=2&cursor={body['next_cursor']}"
    (second,) = asyncio.run(_api(db_url, next_page))
    assert [i["id"] for i in second.json()["items"]] == expected("memory")[2:4]
    assert bad_limit.status_code == 422
    assert bad_cursor.status_code == 422
    assert [e["loc"] for e in bad_cursor.json()["detail"]] == [["query", "cursor"]]
