"""The entry JSON, the entry page, the search and the match are served by plain Starlette routes
ahead of FastAPI's, and stay documented by FastAPI's (see `errkb.service.plain_routes`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import httpx
from fastapi import FastAPI, Query, Request
from pydantic import BaseModel
from starlette.routing import BaseRoute, Match, Route

from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.match.routes import MatchQuery
from errkb.service.plain_routes import query_model
from errkb.service.problems import install_error_handlers
from errkb.service.read.search import CURSOR_PATTERN, MAX_LIMIT
from errkb.service.search.routes import SearchQuery


def _first_route(path: str, method: str = "GET") -> BaseRoute:
    app = create_app(Settings(database_url=f"sqlite:///{Path('/nonexistent/kb.sqlite3')}"))
    scope = {"type": "http", "path": path, "method": method, "root_path": "", "app": app}
    for route in app.router.routes:
        if route.matches(scope)[0] is Match.FULL:
            return route
    raise AssertionError(f"no route answers {method} {path}")


def test_the_hottest_routes_are_answered_by_plain_routes() -> None:
    answered = [
        (path, method)
        for path in ("/api/errors/0123456789abcdef", "/errors/0123456789abcdef")
        for method in ("GET", "HEAD")
    ] + [("/api/match", "POST"), ("/api/errors", "GET")]
    for path, method in answered:
        route = _first_route(path, method)
        assert type(route) is Route and route.name.endswith("_plain"), (path, method)


def test_they_stay_documented_with_their_parameters_and_answers() -> None:
    app = create_app(Settings(database_url="sqlite:////nonexistent/kb.sqlite3"))
    get = app.openapi()["paths"]["/api/errors/{error_id}"]["get"]
    names = {(p["name"], p["in"]) for p in get["parameters"]}
    assert names == {("error_id", "path"), ("snapshot", "query")}
    assert {"200", "304", "404", "422"} <= set(get["responses"])
    post = app.openapi()["paths"]["/api/match"]["post"]
    assert [(p["name"], p["in"], p["schema"]["maximum"]) for p in post["parameters"]] == [
        ("limit", "query", 50)
    ]
    assert {"200", "413", "422", "503"} <= set(post["responses"])


def test_other_routes_keep_fastapi() -> None:
    for path in ("/api/errors/0123456789abcdef/occurrences", "/api/snapshots", "/healthz"):
        assert type(_first_route(path)) is not Route, path


def _same_answers(
    declared: Callable[..., object], by_hand: Callable[..., object], queries: list[str]
) -> None:
    """Each query answered alike (status and body) by FastAPI's declared parameters and by hand."""
    app = FastAPI()
    install_error_handlers(app)
    app.get("/api/declared")(declared)
    app.get("/api/by-hand")(by_hand)

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for query in queries:
                want = await client.get(f"/api/declared?{query}")
                got = await client.get(f"/api/by-hand?{query}")
                assert (got.status_code, got.json()) == (want.status_code, want.json()), query

    asyncio.run(run())


def test_the_match_limit_is_validated_as_fastapi_validates_a_declared_query() -> None:
    """The same status and body as the `limit: int = Query(10, ge=1, le=50)` it replaced."""

    def declared(limit: int = Query(10, ge=1, le=50)) -> int:
        return limit

    def by_hand(request: Request) -> int:
        return query_model(MatchQuery, request).limit

    queries = ["", "limit=7", "limit=abc", "limit=0", "limit=51", "limit=", "limit=2.5"]
    queries += ["limit=3&limit=x", "limit=x&limit=3", "limit=%C3%A9", "limit=-1", "limit=1e3"]
    queries += ["limit=+5", "limit=%205", "limit=50", "limit=99999999999999999999999", "x=1"]
    _same_answers(declared, by_hand, queries)


def test_the_search_query_is_validated_as_its_declared_parameters_were() -> None:
    """The same status and body as the search's parameters declared one by one, as they were."""

    def declared(
        q: Annotated[str, Query(max_length=500)] = "",
        snapshot: str | None = None,
        path: str | None = None,
        flag: str | None = None,
        exception: Annotated[str | None, Query(max_length=200)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
        cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
    ) -> list[object]:
        return [q, snapshot, path, flag, exception, limit, cursor]

    def by_hand(request: Request) -> list[object]:
        got = query_model(SearchQuery, request)
        return [got.q, got.snapshot, got.path, got.flag, got.exception, got.limit, got.cursor]

    long_q, long_exception = "q=" + "w" * 501, "exception=" + "E" * 201
    queries = ["", "q=mamba", "q=a&q=b", "snapshot=0.5.18", "snapshot=", "path=python/sglang"]
    queries += ["flag=--tp-size", "exception=ValueError", long_q, long_exception, "limit=0"]
    queries += ["limit=101", "limit=x", "cursor=1:20", "cursor=9:1", "cursor=", "limit=5&cursor=x"]
    queries += ["q=" + "w" * 500, "limit=100", "limit=0&cursor=bad&q=" + "w" * 501, "other=1"]
    _same_answers(declared, by_hand, queries)


def test_a_query_without_parameters_gets_the_defaults_or_the_same_422_for_a_required_one() -> None:
    """No query string takes the models' shared defaults; a model whose field has no default
    still answers as a declared required parameter does (not the shared defaults)."""

    class Needs(BaseModel):
        x: int
        y: int = 3

    def declared(x: int = Query(), y: int = Query(3)) -> list[int]:
        return [x, y]

    def by_hand(request: Request) -> list[int]:
        got = query_model(Needs, request)
        return [got.x, got.y]

    _same_answers(declared, by_hand, ["", "x=1", "x=a", "y=4", "x=2&y=5"])
    request = Request({"type": "http", "query_string": b"", "headers": []})
    assert query_model(MatchQuery, request) is query_model(MatchQuery, request)
    assert query_model(MatchQuery, request).limit == 10
