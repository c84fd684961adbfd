"""`/mcp`: the MCP server over streamable HTTP, inside the app that serves the API and pages.

The SDK's own Starlette app would run its session manager in its lifespan, which a mounted app
never gets, so only its route is taken and the manager runs in the FastAPI app's lifespan. A
session manager runs once, so each app builds its own server (tests build several apps). The
transport's Host and Origin checks (against DNS rebinding) admit the loopback names, the
configured listening host and the host of `ERRKB_PUBLIC_URL`, the same settings that decide the
pages' canonical links.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from fastapi import FastAPI
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route

from errkb.core.settings import Settings
from errkb.service.mcp.reading import Backing, Reader
from errkb.service.mcp.server import build_server

PATH = "/mcp"
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_ANY = ("0.0.0.0", "::", "")


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Host and Origin checks that admit this server's own names and no other."""
    hosts = list(_LOOPBACK)
    if settings.host not in _ANY and settings.host not in ("::1",):
        hosts.append(f"[{settings.host}]" if ":" in settings.host else settings.host)
    origins = [f"http://{h}:*" for h in hosts] + [f"http://{h}" for h in hosts]
    allowed = [f"{h}:*" for h in hosts] + hosts
    if settings.public_url:
        public = urlsplit(settings.public_url)
        allowed.append(public.netloc)
        origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


def base_url(settings: Settings, ctx: Context) -> str:
    """The base of the links in answers: ERRKB_PUBLIC_URL, else the address the client used."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    request = ctx.request_context.request
    if isinstance(request, Request):  # its Host passed the transport's check above
        return str(request.base_url).rstrip("/")
    return f"http://{settings.host}:{settings.port}"


def install_mcp(app: FastAPI) -> None:
    """Serve MCP at `/mcp` on the app's own read side, for the app's lifetime."""
    settings: Settings = app.state.settings
    server = build_server(lambda: app.state.mcp_reader, lambda ctx: base_url(settings, ctx))
    # The text limit is checked by the tool, with a sentence; JSON may escape each byte of it
    # into six, so the transport's own cap leaves room for that.
    cap = max(DEFAULT_MAX_REQUEST_BODY_SIZE, 6 * settings.max_body_bytes + (64 << 10))
    sdk_app = server.streamable_http_app(  # sets up the session manager
        streamable_http_path=PATH,
        # Stateless, one JSON answer per request: the tools need no session, and with
        # `errkb serve --workers N` each request may reach a process that never saw the last.
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(settings),
        max_request_body_size=cap,
    )
    # Only the SDK app's transport, as a route of our own that names the methods it answers. It
    # comes first: every call would otherwise be tried against each API and page route first.
    del sdk_app
    endpoint = StreamableHTTPASGIApp(server.session_manager)
    app.router.routes.insert(0, Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    app.state.mcp_server = server  # for tests that drive it in memory beside the JSON routes

    @asynccontextmanager
    async def running(app: FastAPI) -> AsyncIterator[None]:
        s = app.state
        app.state.mcp_reader = Reader(
            Backing(settings, s.sessions, s.versions, s.entries, s.matcher)
        )
        async with server.session_manager.run():
            yield

    app.state.lifespan_contexts.append(running)
