"""The entry JSON and the entry page are served by plain Starlette routes ahead of FastAPI's,
and stay documented by FastAPI's (see `errkb.service.plain_routes`)."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute, Match, Route

from errkb.core.settings import Settings
from errkb.service.app import create_app


def _first_route(path: str, method: str = "GET") -> BaseRoute:
    app = create_app(Settings(database_url=f"sqlite:///{Path('/nonexistent/kb.sqlite3')}"))
    scope = {"type": "http", "path": path, "method": method, "root_path": "", "app": app}
    for route in app.router.routes:
        if route.matches(scope)[0] is Match.FULL:
            return route
    raise AssertionError(f"no route answers {method} {path}")


def test_the_hottest_routes_are_answered_by_plain_routes() -> None:
    for path in ("/api/errors/0123456789abcdef", "/errors/0123456789abcdef"):
        for method in ("GET", "HEAD"):
            route = _first_route(path, method)
            assert type(route) is Route and route.name.endswith("_plain"), (path, method)


def test_they_stay_documented_with_their_parameters_and_answers() -> None:
    app = create_app(Settings(database_url="sqlite:////nonexistent/kb.sqlite3"))
    get = app.openapi()["paths"]["/api/errors/{error_id}"]["get"]
    names = {(p["name"], p["in"]) for p in get["parameters"]}
    assert names == {("error_id", "path"), ("snapshot", "query")}
    assert {"200", "304", "404", "422"} <= set(get["responses"])


def test_other_routes_keep_fastapi() -> None:
    for path, method in (
        ("/api/errors/0123456789abcdef/occurrences", "GET"),
        ("/api/match", "POST"),
    ):
        assert type(_first_route(path, method)) is not Route, path
