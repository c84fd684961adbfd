"""`errkb mcp`: the MCP server over stdio, for desktop agents that start it as a subprocess.

It reads the knowledge base that the settings name (`ERRKB_DATABASE_URL`), with a backing of
its own: the same read side, caches and match processes as a server process has. Links in the
answers point to `ERRKB_PUBLIC_URL`, or else to the address `errkb serve` listens on by default.
"""

from __future__ import annotations

import anyio

from errkb.core.settings import Settings
from errkb.service.mcp.reading import Reader, open_backing
from errkb.service.mcp.server import build_server


def _base_url(settings: Settings) -> str:
    if settings.public_url:
        return settings.public_url.rstrip("/")
    return f"http://{settings.host}:{settings.port}"


async def _serve(settings: Settings) -> None:
    with open_backing(settings) as backing:
        reader = Reader(backing)
        base = _base_url(settings)
        server = build_server(lambda: reader, lambda _ctx: base)
        await server.run_stdio_async()


def run_stdio(settings: Settings) -> None:
    """Answer MCP requests on stdin and stdout until the client closes them."""
    anyio.run(_serve, settings)
