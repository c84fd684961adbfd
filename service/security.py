"""Security headers on every response: pages show text from untrusted repositories.

The Content-Security-Policy allows scripts and styles only from this site's own files, so even a
message that slipped through escaping could not run inline script. The interactive API docs
(`/docs`, `/redoc`) load FastAPI's own assets and inline bootstrapping, so they are left out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
}
_EXEMPT = ("/docs", "/redoc")


def add_security_headers(app: FastAPI) -> None:
    """Install the middleware that sets CSP and friends on every response."""

    @app.middleware("http")
    async def security_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        if not request.url.path.startswith(_EXEMPT):
            response.headers.setdefault("Content-Security-Policy", CSP)
        return response
