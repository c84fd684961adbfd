"""Security headers on every response: pages show text from untrusted repositories.

The Content-Security-Policy allows scripts and styles only from this site's own files, so even a
message that slipped through escaping could not run inline script. The interactive API docs
(`/docs`, `/redoc`) load FastAPI's own assets and inline bootstrapping, so they are left out.
It is plain ASGI middleware (headers added as the response starts): Starlette's `BaseHTTPMiddleware`
would cost every request an extra task and body stream.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


class SecurityHeaders:
    """ASGI middleware setting CSP and friends on every HTTP response that lacks them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with_csp = not scope["path"].startswith(_EXEMPT)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
                if with_csp:
                    headers.setdefault("Content-Security-Policy", CSP)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def add_security_headers(app: FastAPI) -> None:
    """Install the middleware that sets CSP and friends on every response."""
    app.add_middleware(SecurityHeaders)
