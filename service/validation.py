"""Request text that must never reach the database: NUL characters in the path or the query.

PostgreSQL text cannot hold NUL, so an id, path, flag, snapshot or repo carrying `%00` made the
driver fail with a 500 on every route that queries by it. This ASGI middleware answers such a
request before routing, so no route has to remember: 404 for a path (no such resource can
exist), 422 for a query parameter, in FastAPI's validation-error shape.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from errkb.service.problems import problem_response

NUL = "\x00"


def nul_query_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter whose name or value holds a NUL, if any."""
    if b"\x00" not in query_string and b"%00" not in query_string:
        return None  # the common case, without parsing
    for name, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if NUL in name or NUL in value:
            return name.replace(NUL, "") or "?"
    return None


class RefuseNul:
    """Answer requests whose path or query holds a NUL (404 / 422) before any route runs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if NUL in path:
            response = problem_response(
                path, scope_accept(scope), 404, "no such page: the address holds a NUL character"
            )
            await response(scope, receive, send)
            return
        name = nul_query_parameter(scope.get("query_string", b""))
        if name is not None:
            response = problem_response(
                path,
                scope_accept(scope),
                422,
                f"the query parameter {name!r} must not contain a NUL character",
                loc=("query", name),
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def scope_accept(scope: Scope) -> str:
    """The request's Accept header ("" when absent)."""
    for key, value in scope.get("headers", ()):
        if key == b"accept":
            return str(value.decode("latin-1"))
    return ""
