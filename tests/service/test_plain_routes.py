"""The entry JSON, the entry page and the match are served by plain Starlette routes ahead of
FastAPI's, and stay documented by FastAPI's (see `errkb.service.plain_routes`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from fastapi import FastAPI, Query, Request
from starlette.routing import BaseRoute, Match, Route

from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.match.routes import _limit
from errkb.service.problems import install_error_handlers


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
    ] + [("/api/match", "POST")]
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
    for path in ("/api/errors/0123456789abcdef/occurrences", "/api/errors", "/healthz"):
        assert type(_first_route(path)) is not Route, path


def test_the_match_limit_is_validated_as_fastapi_validates_a_declared_query() -> None:
    """The same status and body as `limit: int = Query(10, ge=1, le=50)` for every input."""
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/api/declared")
    def declared(limit: int = Query(10, ge=1, le=50)) -> int:
        return limit

    @app.get("/api/by-hand")
    def by_hand(request: Request) -> int:
        return _limit(request)

    queries = ["", "limit=7", "limit=abc", "limit=0", "limit=51", "limit=", "limit=2.5"]
    queries += ["limit=3&limit=x", "limit=x&limit=3", "limit=%C3%A9", "limit=-1", "limit=1e3"]
    queries += ["limit=+5", "limit=%205", "limit=50", "limit=99999999999999999999999"]

    async def run() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for query in queries:
                want = await client.get(f"/api/declared?{query}")
                got = await client.get(f"/api/by-hand?{query}")
                assert (got.status_code, got.json()) == (want.status_code, want.json()), query

    asyncio.run(run())
