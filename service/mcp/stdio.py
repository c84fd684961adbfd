"""`errkb mcp`: the MCP server over stdio, for desktop agents that start it as a subprocess.

It reads the knowledge base that the settings name (`ERRKB_DATABASE_URL`), with a backing of
its own: the same read side, caches and match processes as a server process has. It never
creates or migrates a database. When it cannot read one (a mistyped path, a schema behind, a
database that does not answer), it still answers `initialize`, and every tool returns the
reason as a tool error, so the agent can tell its user rather than see "Connection closed".

The match processes are started as the server starts, so the first match_error is answered as
fast as the next. A line on stdin that is not JSON-RPC (a client that cut a log mid-emoji, a
stray print) gets a -32700 reply with the request's id when it can be read, where the SDK
sent none and the client waited for its timeout. Links in the answers point to
`ERRKB_PUBLIC_URL`, and are left out without it: nothing may serve the default address.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from sqlalchemy.exc import SQLAlchemyError

from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.service.mcp.reading import Reader, Unavailable, open_backing
from errkb.service.mcp.server import build_server


def _unavailable(reason: str) -> Callable[[], Reader]:
    def reader_of() -> Reader:
        raise Unavailable(reason)

    return reader_of


class CheckedLines:
    """stdin's lines, those that are not JSON-RPC answered at once with a -32700 error."""

    def __init__(self, lines: Any) -> None:
        self._lines = lines
        self.replies: Any = None  # the transport's write stream, set once it exists

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not line.strip():
                continue
            try:
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValueError as exc:
                await self._refuse(line, exc)
                continue
            yield line

    async def _refuse(self, line: str, exc: Exception) -> None:
        request_id = None
        try:
            data = json.loads(line)
            if isinstance(data, dict) and isinstance(data.get("id"), (int, str)):
                request_id = data["id"]
        except (ValueError, RecursionError):
            pass
        what = "not JSON" if request_id is None else "not a valid JSON-RPC message"
        error = types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: the line is {what}.")
        reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        if self.replies is not None:
            await self.replies.send(SessionMessage(reply))


async def _serve(settings: Settings) -> None:
    base = settings.public_url.rstrip("/") if settings.public_url else ""
    with ExitStack() as stack:
        backing = None
        try:
            backing = stack.enter_context(open_backing(settings))
            reader = Reader(backing)
            reader_of: Callable[[], Reader] = lambda: reader  # noqa: E731
        except ErrkbError as exc:
            reader_of = _unavailable(exc.message)
        except SQLAlchemyError as exc:
            cause = getattr(exc, "orig", None) or exc
            first = (str(cause).splitlines() or ["no answer"])[0][:200]
            reader_of = _unavailable(f"The knowledge base cannot be read: {first}")
        server = build_server(reader_of, lambda _ctx: base)
        stdin = anyio.wrap_file(_stdin_text())
        lines = CheckedLines(stdin)
        async with anyio.create_task_group() as tg:
            if backing is not None:  # the first match as fast as the next
                tg.start_soon(anyio.to_thread.run_sync, backing.matcher.warm)
                tg.start_soon(anyio.to_thread.run_sync, reader.warm)
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.replies = write_stream
                low = server._lowlevel_server
                await low.run(read_stream, write_stream, low.create_initialization_options())
            tg.cancel_scope.cancel()


def _stdin_text() -> Any:
    """stdin as text, undecodable bytes replaced (as the SDK reads it)."""
    import io
    import sys

    return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")


def run_stdio(settings: Settings) -> None:
    """Answer MCP requests on stdin and stdout until the client closes them."""
    anyio.run(_serve, settings)
