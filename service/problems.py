"""Error responses built outside the routes: handled errors, refused input and crashes.

One shape for each audience: JSON `{"detail": ...}` for the API (422s in FastAPI's list form,
which is what the OpenAPI document declares), a short HTML page for the pages. Both carry the
security headers themselves, since a response made by an exception handler may never pass
through the middleware that adds them. Nothing here shows a traceback or the exception's text.
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.responses import HTMLResponse, JSONResponse, Response

from errkb.core.errors import BadInput, ErrkbError, Unavailable
from errkb.service.read.status import EMPTY_KB
from errkb.service.security import CSP, HEADERS

_JSON_PREFIXES = ("/api/", "/healthz", "/openapi.json")
_HEADINGS = {
    404: "Not found",
    413: "Too large",
    422: "That did not work",
    500: "Server error",
    503: "Busy or unavailable",
}
_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{heading} - errkb</title></head>
<body><main><h1>{heading}</h1><p>{message}</p><p><a href="/">Back to the index</a></p></main>
</body></html>
"""


def wants_html(path: str, accept: str) -> bool:
    """True for a page address asked for by a browser: the API always answers JSON."""
    if path.startswith(_JSON_PREFIXES):
        return False
    return "text/html" in accept or "application/json" not in accept


def validation_detail(message: str, loc: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """A 422 `detail` in the list form FastAPI declares for validation errors."""
    return [{"loc": list(loc), "msg": message, "type": "value_error"}]


def problem_response(
    path: str,
    accept: str,
    status: int,
    message: str,
    loc: tuple[str | int, ...] = (),
    details: list[dict[str, Any]] | None = None,
) -> Response:
    """The error response for this address: an HTML page or JSON, with the security headers.

    A 422's JSON `detail` is `details` when given (several bad parameters), else one item.
    """
    headers = dict(HEADERS)
    headers["Content-Security-Policy"] = CSP
    headers["Cache-Control"] = "no-store"
    if wants_html(path, accept):
        heading = _HEADINGS.get(status, "That did not work")
        body = _PAGE.format(heading=escape(heading), message=escape(message))
        return HTMLResponse(body, status_code=status, headers=headers)
    detail: Any = message
    if status == 422:
        detail = details if details is not None else validation_detail(message, loc)
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _described(item: dict[str, Any]) -> str:
    """One validation error as words: "query parameter limit: Input should be ..."."""
    loc = [str(part) for part in item["loc"]]
    where = f"{loc[0]} parameter {'.'.join(loc[1:])}" if len(loc) > 1 else ".".join(loc)
    return f"{where}: {item['msg']}" if where else str(item["msg"])


def _empty(request: Request) -> bool:
    """Whether the knowledge base held nothing at the last health check (see `service.health`)."""
    return bool(getattr(request.app.state, "kb_empty", False))


def install_error_handlers(app: FastAPI) -> None:
    """Map handled errors to their status and any other exception to a bare 500."""

    async def handled(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ErrkbError)
        loc = exc.loc if isinstance(exc, BadInput) else ()
        message = exc.message
        if exc.status_code == 404 and _empty(request):  # why everything is missing
            message = f"{message}; {EMPTY_KB}"
        response = problem_response(
            request.url.path, request.headers.get("accept", ""), exc.status_code, message, loc
        )
        if isinstance(exc, Unavailable) and exc.retry_after is not None:
            response.headers["Retry-After"] = str(exc.retry_after)
        return response

    async def crashed(request: Request, exc: Exception) -> Response:
        # The traceback goes to the server log (Starlette re-raises after this answer), never
        # to the client.
        return problem_response(
            request.url.path,
            request.headers.get("accept", ""),
            500,
            "the server failed to answer this request; it has been logged",
        )

    async def invalid(request: Request, exc: Exception) -> Response:
        # FastAPI's own 422, in the same shape as every other: loc, msg and type per item (the
        # rejected input is not echoed back), with the security headers, as a page for a page.
        assert isinstance(exc, RequestValidationError)
        details = [
            {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type")}
            for e in exc.errors()
        ]
        message = "; ".join(_described(d) for d in details) or "the request is not valid"
        accept = request.headers.get("accept", "")
        return problem_response(request.url.path, accept, 422, message, details=details)

    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(ErrkbError, handled)
    app.add_exception_handler(Exception, crashed)
