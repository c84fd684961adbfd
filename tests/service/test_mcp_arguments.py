"""Tool arguments checked strictly through the SDK's client: an unknown name, a string for a
number, a boolean for a number and a value out of range each get one plain sentence that names
the argument, never a pydantic dump."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from pages_repo import ingest_pages_repo
from test_mcp import connected

REFUSED = [
    (
        "match_error",
        {"text": "ValueError: x", "verison": "v1"},
        "The tool match_error takes no argument 'verison'; its arguments are text, version, limit.",
    ),
    (
        "match_error",
        {"text": "ValueError: x", "limit": True},
        "The argument 'limit' must be a whole number, not true.",
    ),
    (
        "match_error",
        {"text": "ValueError: x", "limit": "3"},
        "The argument 'limit' must be a whole number, not the string '3'.",
    ),
    ("match_error", {"text": 3}, "The argument 'text' must be a string, not 3."),
    ("match_error", {}, "The argument 'text' is required."),
    ("search_errors", {"query": "x", "limit": 0}, "The argument 'limit' must be at least 1."),
    ("search_errors", {"query": "x", "limit": 21}, "The argument 'limit' must be at most 20."),
    (
        "get_error",
        {"id": "0123456789abcdef", "version": 1},
        "The argument 'version' must be a string, not 1.",
    ),
]


def test_bad_arguments_are_one_sentence_naming_the_argument(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")

    async def check(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert all(t.input_schema.get("additionalProperties") is False for t in tools)
        for tool, args, sentence in REFUSED:
            result = await client.call_tool(tool, args)
            assert result.is_error, (tool, args)
            text: Any = result.content[0].text
            assert text == sentence, (tool, args)
            assert "\n" not in text and "pydantic" not in text
        fine = await client.call_tool("match_error", {"text": "ValueError: x", "limit": 2})
        assert not fine.is_error

    async def main() -> None:
        async with connected(db_url, tmp_path) as client:
            await check(client)

    anyio.run(main)
