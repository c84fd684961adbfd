"""The MCP server over streamable HTTP (`/mcp` in the app), driven by the SDK's client: strict
arguments, the protocol's codes for a missing prompt argument and an unknown resource, and
matches that say their confidence, as over stdio."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from ranking_repo import MOVED, ingest_ranking_repo

from errkb.core.settings import Settings
from errkb.service.app import create_app


@asynccontextmanager
async def http_client(url: str) -> AsyncIterator[Client]:
    """The SDK's client of the app's /mcp, in process."""
    app = create_app(Settings(database_url=url, public_url="https://kb.example"))
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            mcp = streamable_http_client("http://127.0.0.1/mcp", http_client=http)
            async with Client(mcp) as client:
                yield client


def test_strict_arguments_and_protocol_codes_over_http(db_url: str, tmp_path: Path) -> None:
    ingest_ranking_repo(db_url, tmp_path / "repo")

    async def main() -> None:
        async with http_client(db_url) as client:
            bad = await client.call_tool("match_error", {"text": "x", "verison": "v1"})
            text: Any = bad.content[0].text
            assert bad.is_error and text.startswith("The tool match_error takes no argument")
            coerced = await client.call_tool("match_error", {"text": "x", "limit": "3"})
            assert coerced.is_error and "must be a whole number" in coerced.content[0].text
            with pytest.raises(MCPError) as missing:
                await client.get_prompt("explain_traceback", {})
            assert missing.value.error.code == -32602
            with pytest.raises(MCPError) as unknown:
                await client.read_resource("errkb://errors/0123456789abcdef")
            assert unknown.value.error.code == -32002
            found = await client.call_tool("match_error", {"text": f"ValueError: {MOVED}"})
            (top,) = found.structured_content["matches"]
            assert top["confidence"] == "match" and top["page_url"].startswith("https://kb.")

    anyio.run(main)
