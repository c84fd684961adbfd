"""The MCP server in memory, driven by the SDK's own client, on SQLite and PostgreSQL: its tools,
resource and prompt on a small ingested project, and a clear tool error for each bad argument.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from jsonschema import Draft202012Validator
from knowledge_repo import MAMBA_MESSAGE, SWA_MESSAGE, literal_id
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult
from pages_repo import XSS_MESSAGE, ingest_pages_repo
from pydantic import ValidationError

from errkb.core.settings import Settings
from errkb.service.mcp.answers import ErrorDetails
from errkb.service.mcp.asking import Answers
from errkb.service.mcp.markdown import error_markdown
from errkb.service.mcp.reading import Reader, open_backing
from errkb.service.mcp.server import build_server

BASE = "https://errkb.example.org"


@asynccontextmanager
async def connected(url: str, tmp_path: Path, **settings: Any) -> AsyncIterator[Client]:
    """An in-memory client of a server reading the knowledge base at `url`."""
    with open_backing(Settings(database_url=url, data_dir=tmp_path, **settings)) as backing:
        reader = Reader(backing)
        async with Client(build_server(lambda: reader, lambda _ctx: BASE)) as client:
            yield client


def _run(url: str, tmp_path: Path, check: Any, **settings: Any) -> None:
    async def main() -> None:
        async with connected(url, tmp_path, **settings) as client:
            await check(client)

    anyio.run(main)


def _text(result: Any) -> str:
    assert len(result.content) == 1
    text: str = result.content[0].text
    return text


def test_tools_answer_on_a_small_project(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    swa, mamba = literal_id(SWA_MESSAGE), literal_id(MAMBA_MESSAGE)

    async def check(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"match_error", "get_error", "search_errors"}
        for tool in tools.values():
            assert "Use this" in (tool.description or "")
            assert tool.output_schema is not None  # structured output, with its schema
            # written in place, optional fields as one type list: the SDK's client checks every
            # answer, and $refs and anyOf branches made it slower
            assert "$ref" not in json.dumps(tool.output_schema)
            assert "anyOf" not in json.dumps(tool.output_schema)
            assert tool.annotations is not None and tool.annotations.read_only_hint
        assert tools["match_error"].input_schema["required"] == ["text"]

        log = f"Traceback (most recent call last):\n  ...\nValueError: {MAMBA_MESSAGE}\n"
        found = await client.call_tool("match_error", {"text": log})
        assert not found.is_error
        top = found.structured_content["matches"][0]
        assert (top["id"], top["exception"], top["message"]) == (mamba, "ValueError", MAMBA_MESSAGE)
        assert top["score"] >= 0.8 and top["versions"] == ["v1", "v2"]
        assert top["page_url"] == f"{BASE}/errors/{mamba}"
        assert f"`{mamba}`" in _text(found) and len(_text(found)) <= 2000

        got = await client.call_tool("get_error", {"id": swa})
        assert not got.is_error
        d = got.structured_content
        assert d["message"] == SWA_MESSAGE and d["versions"]["present_in"] == ["v1"]
        assert d["versions"]["ranges"] == [{"first": "v1", "last": "v1", "versions": 1}]
        assert d["versions"]["gone_in"] == "v2" and d["source"]["path"] == "srv/pools.py"
        text = _text(got)
        for part in ("## What it means", "## Solutions", "## Who hits it", "## Versions"):
            assert part in text
        assert f"Full page: {BASE}/errors/{swa}" in text and len(text) <= 8000
        again = await client.call_tool("get_error", {"id": swa})  # the answer kept the first time
        assert (_text(again), again.structured_content) == (text, d) and not again.is_error

        # A version picks the occurrence shown, as `?snapshot=` does on the JSON route.
        old = await client.call_tool("get_error", {"id": mamba.upper(), "version": "v1"})
        assert old.structured_content["source"]["snapshot"] == "v1"

        nothing = await client.call_tool("match_error", {"text": "all went well"})
        assert nothing.structured_content["matches"] == [] and not nothing.is_error
        assert _text(nothing).startswith("No known error matches this text.")

        hits = await client.call_tool("search_errors", {"query": "does not support SWA"})
        assert hits.structured_content["items"][0]["id"] == swa
        flagged = await client.call_tool("search_errors", {"query": "", "flag": "--tp-size"})
        messages = [h["message"] for h in flagged.structured_content["items"]]
        assert XSS_MESSAGE in messages and SWA_MESSAGE not in messages

    _run(db_url, tmp_path, check)


def test_resource_and_prompt(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    swa = literal_id(SWA_MESSAGE)

    async def check(client: Client) -> None:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["errkb://errors/{id}"]
        read = await client.read_resource(f"errkb://errors/{swa}")
        assert read.contents[0].text.startswith(f"# ValueError: {SWA_MESSAGE}")
        with pytest.raises(MCPError, match="no error with id"):
            await client.read_resource("errkb://errors/0123456789abcdef")

        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["explain_traceback"]
        prompt = await client.get_prompt(
            "explain_traceback", {"traceback": f"ValueError: {SWA_MESSAGE}"}
        )
        text = prompt.messages[0].content.text
        # Chained: the matches, then the best match's entry, both for the model to read.
        assert f"`{swa}` ValueError" in text and "## What it means" in text
        with pytest.raises(MCPError, match="The text is empty"):
            await client.get_prompt("explain_traceback", {"traceback": " "})

    _run(db_url, tmp_path, check)


def test_building_a_server_leaves_logging_alone() -> None:
    """As in `errkb serve`, before uvicorn: a root logger with no handler stays without one."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    root.handlers.clear()  # pytest's own capture handlers would make basicConfig a no-op
    try:
        build_server(lambda: None, lambda _ctx: BASE)  # type: ignore[arg-type, return-value]
        assert (root.handlers, root.level) == ([], level)
    finally:
        root.handlers[:] = saved
        root.setLevel(level)


BAD_ARGUMENTS = [
    ("get_error", {"id": "0123456789abcdef"}, "no error with id"),
    ("get_error", {"id": "not-an-id"}, "is not an error id: an id is 16 hexadecimal digits"),
    ("get_error", {"id": "ID", "version": "v9"}, "is not an error id"),
    ("get_error", {"id": "SWA", "version": "v9"}, "Version 'v9' is not in the knowledge base"),
    ("get_error", {"id": "SWA", "version": "v2"}, "is not raised in snapshot 'v2'"),
    ("match_error", {"text": ""}, "The text is empty"),
    ("match_error", {"text": " \n\t "}, "The text is empty"),
    ("match_error", {"text": "x" * 3000}, "more than the 2000 bytes this server matches"),
    ("match_error", {"text": "ValueError: x", "version": "0.5.18"}, "Ingested versions: v1, v2"),
    ("match_error", {"text": "x", "limit": 0}, "limit"),
    ("search_errors", {"query": "x", "limit": 500}, "limit"),
]


def test_each_bad_argument_is_a_tool_error(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")
    swa = literal_id(SWA_MESSAGE)

    async def check(client: Client) -> None:
        for tool, args, expected in BAD_ARGUMENTS:
            args = {k: swa if v == "SWA" else v for k, v in args.items()}
            result = await client.call_tool(tool, args)
            assert result.is_error, (tool, args)
            assert expected in _text(result), (tool, args, _text(result))
            assert "Traceback" not in _text(result)

    _run(db_url, tmp_path, check, max_body_bytes=2000)


def test_an_empty_knowledge_base_says_so(db_url: str, tmp_path: Path) -> None:
    async def check(client: Client) -> None:
        calls = [
            ("match_error", {"text": "ValueError: anything"}),
            ("get_error", {"id": "0123456789abcdef"}),
            ("search_errors", {"query": "anything"}),
        ]
        for tool, args in calls:
            result = await client.call_tool(tool, args)
            assert result.is_error
            assert "The knowledge base is empty" in _text(result)
            assert "errkb ingest" in _text(result)

    _run(db_url, tmp_path, check)


@pytest.mark.slow
def test_errkb_mcp_over_stdio_on_an_empty_database(tmp_path: Path) -> None:
    """A real `errkb mcp` on a migrated database with nothing ingested keeps stdout for the
    protocol, and says that there is nothing to answer from yet."""
    from errkb.core.db import make_engine, upgrade

    errkb = str(Path(sys.executable).parent / "errkb")
    env = {"ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}"}
    engine = make_engine(env["ERRKB_DATABASE_URL"])
    upgrade(engine)
    engine.dispose()
    params = StdioServerParameters(command=errkb, args=["mcp"], env=env, cwd=tmp_path)

    async def main() -> None:
        async with Client(params) as client:
            assert len((await client.list_tools()).tools) == 3
            result = await client.call_tool("search_errors", {"query": "anything"})
            assert result.is_error and "The knowledge base is empty" in _text(result)

    anyio.run(main)


@pytest.mark.slow
def test_errkb_serve_admits_mcp_clients_at_the_host_it_was_given(tmp_path: Path) -> None:
    """`--host` is what /mcp's Host check admits, beside the loopback names; others get 421."""
    from serving import free_port, serve, stop, wait_healthy

    port = free_port()
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    proc = serve(url, port, tmp_path, "--host", "127.0.0.2")
    try:
        wait_healthy(f"http://127.0.0.2:{port}", proc)

        async def main() -> None:
            async with Client(f"http://127.0.0.2:{port}/mcp") as client:
                assert len((await client.list_tools()).tools) == 3

        anyio.run(main)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream", "Host": "example.org"}
        forged = httpx.post(f"http://127.0.0.2:{port}/mcp", json=body, headers=headers)
        assert forged.status_code == 421
    finally:
        stop(proc)


def test_kept_answers_last_only_as_long_as_their_content_key() -> None:
    kept = Answers(2)
    one, two, three = (CallToolResult(content=[]) for _ in range(3))
    kept.get("k1", "a")
    kept.put("k1", "a", one)
    kept.put("k1", "b", two)
    assert kept.get("k1", "a") is one  # now the most recently used
    kept.put("k1", "c", three)  # past the bound: "b", the least recently used, goes
    assert (kept.get("k1", "b"), kept.get("k1", "a"), kept.get("k1", "c")) == (None, one, three)
    assert kept.get("k2", "a") is None  # an ingest moved the key: nothing older is served
    kept.put("k1", "a", one)  # made under the old key while the new one arrived: not kept
    assert kept.get("k2", "a") is None


def test_output_schemas_admit_what_the_models_admit() -> None:
    schema = ErrorDetails.model_json_schema()
    check = Draft202012Validator(schema)
    versions = {
        "ranges": [{"first": "v1", "last": "v1", "versions": 1}],
        "present_in": ["v1"],
        "first_seen": "v1",
        "last_seen": "v1",
        "summary": "v1",
    }
    bare = ErrorDetails(
        **dict.fromkeys(["id", "exception", "message", "repo", "what_it_means", "trigger"], "x"),
        common_situations=[],
        solutions=[{"kind": "fix", "text": "t"}],
        related=[],
        related_total=0,
        versions=versions,
        test_code=False,
        sites_total=1,
        page_url="/e",
        json_url="/e.json",
    ).model_dump(mode="json")
    assert bare["source"] is None and bare["example_fix"] is None  # nulls, written out
    full = {
        **bare,
        "who_hits_it": {"kind": "flag", "text": "w"},
        "example_fix": {"before": "a", "after": "b", "note": None},
        "source": {"snapshot": "v1", "path": "p.py", "line": 3, "function": "f", "url": None},
    }
    for answer in (bare, full):
        assert not list(check.iter_errors(answer))
    wrong = [
        {**bare, "source": "p.py"},  # an object or null, nothing else
        {**bare, "who_hits_it": "w"},  # its kind and text
        {**full, "source": {**full["source"], "line": None}},  # not optional
        {**full, "example_fix": {"after": "b"}},  # its required fields still hold
        {**bare, "versions": None},
    ]
    for answer in wrong:
        assert list(check.iter_errors(answer)), answer
        with pytest.raises(ValidationError):
            ErrorDetails.model_validate(answer)


def test_the_markdown_lists_the_related_errors_the_structured_answer_lists() -> None:
    versions = {
        "ranges": [{"first": "v1", "last": "v1", "versions": 1}],
        "present_in": ["v1"],
        "first_seen": "v1",
        "last_seen": "v1",
        "summary": "v1",
    }
    related = [
        {"id": f"e{i}", "title": f"Error number {i}", "reason": "same file"} for i in range(5)
    ]
    details = ErrorDetails(
        **dict.fromkeys(["id", "exception", "message", "repo", "what_it_means", "trigger"], "x"),
        common_situations=[],
        solutions=[{"kind": "fix", "text": "t"}],
        related=related,
        related_total=8,
        versions=versions,
        test_code=False,
        sites_total=1,
        page_url="/e",
        json_url="/e.json",
    )
    text = error_markdown(details)
    assert "## Related errors (5 of 8)" in text  # the page has the rest
    assert all(f"`e{i}` Error number {i}" in text for i in range(5))
    whole = error_markdown(details.model_copy(update={"related_total": 5}))
    assert "## Related errors\n" in whole


def test_answers_are_json_serializable_and_small(db_url: str, tmp_path: Path) -> None:
    ingest_pages_repo(db_url, tmp_path / "repo")

    async def check(client: Client) -> None:
        hits = await client.call_tool("search_errors", {"query": "", "limit": 20})
        ids = [h["id"] for h in hits.structured_content["items"]]
        assert len(ids) == hits.structured_content["total"] >= 5
        for error_id in ids:
            got = await client.call_tool("get_error", {"id": error_id})
            assert len(_text(got)) <= 8000
            assert len(json.dumps(got.structured_content)) <= 8000

    _run(db_url, tmp_path, check)
