"""A real `errkb mcp` over stdio, driven by the SDK's client and by raw lines: it never creates a
database, answers `initialize` and gives the reason from every tool when it cannot serve, replies
-32700 to a line that is not JSON-RPC, uses the protocol's codes for a missing prompt argument
and an unknown resource, and links only to `ERRKB_PUBLIC_URL`, and reads its match index from
the cache folder when an earlier start kept it; streamable HTTP gives the same protocol codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from match_project import ingest_version, swa_id, swa_line, traceback
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from pages_repo import ingest_pages_repo

ERRKB = str(Path(sys.executable).parent / "errkb")
pytestmark = pytest.mark.slow


def _params(url: str, cwd: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=ERRKB, args=["mcp"], env={"ERRKB_DATABASE_URL": url, **env}, cwd=cwd
    )


@pytest.mark.parametrize("where", ["missing file", "missing folder"])
def test_a_missing_database_is_never_created_and_every_tool_says_why(
    tmp_path: Path, where: str
) -> None:
    path = tmp_path / ("kb.sqlite3" if where == "missing file" else "typo/kb.sqlite3")

    async def main() -> None:
        async with Client(_params(f"sqlite:///{path}", tmp_path)) as client:
            assert len((await client.list_tools()).tools) == 3
            for tool, args in (
                ("match_error", {"text": "ValueError: x"}),
                ("get_error", {"id": "0123456789abcdef"}),
                ("search_errors", {"query": "x"}),
            ):
                result = await client.call_tool(tool, args)
                assert result.is_error
                text: Any = result.content[0].text
                assert f"The knowledge base {path} does not exist" in text, text

    anyio.run(main)
    assert not path.exists() and not path.parent.joinpath("kb.sqlite3-wal").exists()


def _raw(url: str, cwd: Path, lines: list[str]) -> list[dict[str, Any]]:
    """The replies of `errkb mcp` to these lines, one JSON object each."""
    proc = subprocess.run(
        [ERRKB, "mcp"],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        env={"ERRKB_DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_protocol_errors_get_their_codes_over_stdio(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    ingest_pages_repo(url, tmp_path / "repo")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    surrogate = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"match_error",'
    surrogate += '"arguments":{"text":"ValueError: \\ud83d"}}}'
    replies = _raw(
        url,
        tmp_path,
        [
            json.dumps(init),
            '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
            "{this is not json",
            surrogate,
        ],
    )
    by_id = {r.get("id"): r for r in replies}
    assert by_id[None]["error"]["code"] == -32700  # the line that is not JSON at all
    assert by_id[7]["error"]["code"] == -32700  # answered, with its id: no client timeout
    assert "result" in by_id[1]

    async def main() -> None:
        async with Client(_params(url, tmp_path)) as client:
            with pytest.raises(MCPError) as missing:
                await client.get_prompt("explain_traceback", {})
            assert missing.value.error.code == -32602
            assert "needs the argument 'traceback'" in missing.value.error.message
            with pytest.raises(MCPError) as unknown:
                await client.read_resource("errkb://errors/0123456789abcdef")
            assert unknown.value.error.code == -32002
            hits = await client.call_tool("search_errors", {"query": "SWA"})
            assert hits.structured_content["items"][0]["page_url"] is None  # no public URL
            assert "http://" not in hits.content[0].text
        async with Client(_params(url, tmp_path, ERRKB_PUBLIC_URL="https://kb.example")) as c:
            hits = await c.call_tool("search_errors", {"query": "SWA"})
            assert hits.structured_content["items"][0]["page_url"].startswith(
                "https://kb.example/errors/"
            )

    anyio.run(main)


def test_a_second_start_reads_the_kept_match_index_and_a_damaged_or_stale_one_is_rebuilt(
    tmp_path: Path,
) -> None:
    """The match index is kept in the cache folder: a second `errkb mcp` reads it (the file is
    left as it was), one damaged in place is built and written again, and after an ingest the
    new index is built, never the kept one read."""
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    ingest_version(url, tmp_path / "repo", 1)
    cache = tmp_path / "cache"
    layout = "ValueError: Unsupported layout 'nhd' for the paged KV cache"

    async def start() -> tuple[list[str], list[str]]:
        """The matches of the SWA traceback and the layout text, from a fresh server."""
        async with Client(_params(url, tmp_path, ERRKB_CACHE_DIR=str(cache))) as client:
            found = []
            for text in (traceback(swa_line(1)), layout):
                result = await client.call_tool("match_error", {"text": text})
                assert not result.is_error, result.content
                matches = result.structured_content["matches"]
                found.append([m["id"] for m in matches if m["score"] >= 0.8])
            return found[0], found[1]

    def kept() -> os.stat_result:
        (path,) = (cache / "match-index").glob("*.index")
        return path.stat()

    assert anyio.run(start) == ([swa_id()], [])
    written = kept()
    assert anyio.run(start) == ([swa_id()], [])
    assert kept().st_ino == written.st_ino  # read, not written again

    (path,) = (cache / "match-index").glob("*.index")
    with path.open("r+b") as file:  # damaged in place: the same file, one byte changed
        file.seek(-40, os.SEEK_END)
        byte = file.read(1)
        file.seek(-40, os.SEEK_END)
        file.write(bytes([byte[0] ^ 0xFF]))
    assert anyio.run(start) == ([swa_id()], [])
    rebuilt = kept()
    assert rebuilt.st_ino != written.st_ino and rebuilt.st_size == written.st_size

    ingest_version(url, tmp_path / "repo", 2)  # adds the layout error
    swa, layouts = anyio.run(start)
    assert swa == [swa_id()] and len(layouts) == 1  # the new index, not the kept one
    assert kept().st_ino != rebuilt.st_ino
