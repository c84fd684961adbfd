"""The MCP server on real sglang releases, through each transport an agent uses: in memory, over
stdio against a real `errkb mcp`, and over streamable HTTP against a real `errkb serve`. Each
lists the tools, matches the reference error's text, gets its entry and searches for it. Then
`get_error` and `GET /api/errors/{id}` must agree on every field they share, over 50 entries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from serving import ERRKB, free_port, serve, stop, wait_healthy
from sqlalchemy import select

from errkb.core.db import make_engine
from errkb.core.models import Error
from errkb.core.settings import Settings
from errkb.service.app import create_app

pytestmark = pytest.mark.sglang

REFERENCE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)
# As a user pastes it: a traceback, the message wrapped by the terminal.
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/site-packages/sglang/srt/mem_cache/kv_cache_configurator.py", '
    "line 406, in _init_pools\n"
    "    raise ValueError(\n"
    "ValueError: --enable-unified-memory with PD disaggregation does not support hybrid-SWA "
    "models yet (no whole-envelope\ntransfer scheme for the SWA sub-pool). Drop "
    "--enable-unified-memory or run without PD.\n"
)


async def exercise(client: Client) -> str:
    """List, match, get and search as an agent would; the reference error's id."""
    tools = {t.name for t in (await client.list_tools()).tools}
    assert tools == {"match_error", "get_error", "search_errors"}

    found = await client.call_tool("match_error", {"text": TRACEBACK, "version": "0.5.18"})
    assert not found.is_error, found.content
    top = found.structured_content["matches"][0]
    assert top["message"] == REFERENCE and top["exception"] == "ValueError"
    assert top["score"] >= 0.8 and "0.5.18" in top["versions"]
    assert len(found.content[0].text) <= 2000
    error_id: str = top["id"]

    got = await client.call_tool("get_error", {"id": error_id, "version": "0.5.18"})
    assert not got.is_error, got.content
    d = got.structured_content
    assert d["source"]["path"] == "python/sglang/srt/mem_cache/kv_cache_configurator.py"
    assert (d["source"]["line"], d["source"]["function"]) == (
        406,
        "KVCacheConfigurator._init_pools",
    )
    assert (
        d["versions"]["present_in"] == ["0.5.18", "0.5.19"] and d["versions"]["gone_in"] == "0.5.20"
    )
    text = got.content[0].text
    assert "--enable-unified-memory" in text and "## Solutions" in text and len(text) <= 8000
    assert "kv_cache_configurator.py#L406" in text  # the source link, pinned to 0.5.18

    hits = await client.call_tool("search_errors", {"query": "whole-envelope transfer scheme"})
    assert error_id in [h["id"] for h in hits.structured_content["items"]]
    return error_id


def test_in_memory(sglang_kb_url: str, tmp_path: Path) -> None:
    app = create_app(Settings(database_url=sglang_kb_url, data_dir=tmp_path))

    async def main() -> None:
        async with app.router.lifespan_context(app):
            async with Client(app.state.mcp_server) as client:
                await exercise(client)

    anyio.run(main)


@pytest.mark.slow
def test_stdio_against_errkb_mcp(sglang_kb_url: str, tmp_path: Path) -> None:
    env = {"ERRKB_DATABASE_URL": sglang_kb_url, "ERRKB_DATA_DIR": str(tmp_path)}
    env["ERRKB_PUBLIC_URL"] = "https://errkb.example.org"
    params = StdioServerParameters(command=ERRKB, args=["mcp"], env=env, cwd=tmp_path)

    async def main() -> None:
        async with Client(params) as client:
            error_id = await exercise(client)
            got = await client.call_tool("get_error", {"id": error_id})
            page = got.structured_content["page_url"]
            assert page == f"https://errkb.example.org/errors/{error_id}"

    anyio.run(main)


@pytest.mark.slow
def test_streamable_http_against_errkb_serve(sglang_kb_url: str, tmp_path: Path) -> None:
    port = free_port()
    # Two processes: any of them answers any MCP request (stateless), as with the JSON API.
    proc = serve(sglang_kb_url, port, tmp_path, "--workers", "2")
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        url = f"http://127.0.0.1:{port}/mcp"

        async def main() -> None:
            async with Client(url) as client:
                error_id = await exercise(client)
                got = await client.call_tool("get_error", {"id": error_id})
                # No ERRKB_PUBLIC_URL: links use the address the client reached the server at.
                assert got.structured_content["page_url"] == (
                    f"http://127.0.0.1:{port}/errors/{error_id}"
                )

        anyio.run(main)
        _check_host_and_origin(url, port)
        assert proc.poll() is None
    finally:
        stop(proc)


def _check_host_and_origin(url: str, port: int) -> None:
    """A forged Host (DNS rebinding) or a foreign Origin is refused before any tool runs."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream"}
    forged = httpx.post(url, json=body, headers={**headers, "Host": "evil.example"}, timeout=10)
    assert forged.status_code == 421
    foreign = httpx.post(url, json=body, headers={**headers, "Origin": "https://evil.example"})
    assert foreign.status_code == 403
    # The API beside it is untouched by the MCP transport's checks.
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200


def _sample_ids(url: str, n: int) -> list[str]:
    """`n` error ids spread over the knowledge base (ids are hashes: their order is arbitrary)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ids = conn.execute(select(Error.id).order_by(Error.id)).scalars().all()
    finally:
        engine.dispose()
    step = max(1, len(ids) // n)
    return list(ids[::step][:n])


def shared_fields(api: dict[str, Any], base: str) -> dict[str, Any]:
    """What `get_error` must say, read off the JSON entry by its own field names."""
    x = api["explanation"]
    occ = api["occurrences"][0]
    tl = api["timeline"]
    fix = x["example_fix"]
    return {
        "id": api["id"],
        "exception": api["exception"],
        "message": api["message"],
        "repo": api["repo"]["name"],
        "what_it_means": x["what_it_means"]["text"],
        "trigger": x["trigger"]["text"],
        "common_situations": x["common_situations"]["items"],
        "who_hits_it": {k: x["who_hits_it"][k] for k in ("kind", "text")}
        if x["who_hits_it"]
        else None,
        "test_code": api["test_code"]
        or (bool(x["who_hits_it"]) and x["who_hits_it"]["kind"] == "test"),
        "solutions": [
            {"kind": s["kind"], "text": s["text"], "command": s["command"]} for s in x["solutions"]
        ],
        "example_fix": {k: fix[k] for k in ("before", "after", "note")} if fix else None,
        "related": [{k: r[k] for k in ("id", "title", "reason")} for r in api["related"][:5]],
        "related_total": len(api["related"]),
        "versions": {k: tl[k] for k in ("present_in", "first_seen", "last_seen", "gone_in")}
        | {"summary": tl["summary"]}
        | {
            "ranges": [
                {"first": r["from_snapshot"], "last": r["to_snapshot"], "versions": r["snapshots"]}
                for r in tl["ranges"]
                if r["present"]
            ]
        },
        "source": {k: occ[k] for k in ("snapshot", "path", "line", "function", "url")},
        "sites_total": api["sites_total"],
        "page_url": base + api["page_url"],
        "json_url": base + api["json_url"],
    }


def test_get_error_agrees_with_the_json_api(sglang_kb_url: str, tmp_path: Path) -> None:
    settings = Settings(database_url=sglang_kb_url, data_dir=tmp_path)
    app = create_app(settings)
    ids = _sample_ids(sglang_kb_url, 50)
    assert len(ids) == 50
    base = f"http://{settings.host}:{settings.port}"  # in memory, no request: the served address

    async def main() -> None:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with (
                httpx.AsyncClient(transport=transport, base_url="http://t") as http,
                Client(app.state.mcp_server) as client,
            ):
                for error_id in ids:
                    api = (await http.get(f"/api/errors/{error_id}")).json()
                    got = await client.call_tool("get_error", {"id": error_id})
                    assert not got.is_error, got.content
                    assert got.structured_content == shared_fields(api, base), error_id
                    assert len(got.content[0].text) <= 8000
                    assert len(json.dumps(got.structured_content)) <= 8000

    anyio.run(main)
