"""errkb as an MCP server: three tools, one resource template and one prompt for coding agents.

A coding agent that reads an sglang traceback should be able to ask "which error is this, and
what fixes it?" without scraping pages. Each tool's description says when to use it, because
that is what a model reads to choose; each answer is compact Markdown for the model beside a
structured copy for programs, and points to the full page. Bad arguments come back as tool
errors (`isError`) with one plain sentence, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, UserMessage
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ToolAnnotations
from pydantic import Field

from errkb.core.errors import ErrkbError, NotFound
from errkb.service.mcp.answers import ErrorDetails, MatchAnswer, SearchAnswer
from errkb.service.mcp.arguments import check_arguments
from errkb.service.mcp.asking import Questions, tool_result
from errkb.service.mcp.markdown import error_markdown, match_markdown, search_markdown
from errkb.service.mcp.reading import Reader
from errkb.service.mcp.texts import GET_ERROR, INSTRUCTIONS, MATCH_ERROR, PROMPT, SEARCH_ERRORS

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Version = Annotated[
    str | None,
    Field(description="an ingested sglang version such as 0.5.18; omit it for all versions"),
]
Text = Annotated[str, Field(description="the pasted log, error line or traceback")]
ErrorId = Annotated[str, Field(description="the 16-hex-digit error id that a match gave")]
Query = Annotated[
    str,
    Field(
        max_length=500,
        description="words of the message or path; may be left out when a flag or an exception "
        "class filters the search",
    ),
]
ExceptionName = Annotated[
    str | None, Field(description="only this exception class, e.g. ValueError")
]
Flag = Annotated[
    str | None,
    Field(
        description="only errors involving this flag: its name (--tp-size), an alias, or the "
        "settings field (tp_size)"
    ),
]


RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource


def _bad_params(message: str) -> MCPError:
    return MCPError(INVALID_PARAMS, message)


@contextmanager
def resource_refusals() -> Iterator[None]:
    """An unknown error id is the protocol's unknown resource (-32002); any other refusal, bad
    parameters (-32602)."""
    try:
        yield
    except NotFound as exc:
        raise MCPError(RESOURCE_NOT_FOUND, exc.message) from None
    except ErrkbError as exc:
        raise MCPError(INVALID_PARAMS, exc.message) from None


@contextmanager
def refusals(kind: Callable[[str], Exception] = ToolError) -> Iterator[None]:
    """A handled error becomes the protocol's error with its sentence, never a traceback."""
    try:
        yield
    except ErrkbError as exc:
        raise kind(exc.message) from None


def _add_tools(server: MCPServer[Any], q: Questions) -> None:
    @server.tool(description=MATCH_ERROR, annotations=READ_ONLY)
    async def match_error(
        ctx: Context,
        text: Text,
        version: Version = None,
        limit: Annotated[int, Field(ge=1, le=5, description="most matches to return")] = 3,
    ) -> Annotated[CallToolResult, MatchAnswer]:
        with refusals():
            answer = await q.matches(ctx, text, version, limit)
        return tool_result(match_markdown(answer), answer)

    # Async: a warm entry is answered on the event loop, with no hop to a worker thread.
    @server.tool(description=GET_ERROR, annotations=READ_ONLY)
    async def get_error(
        ctx: Context, id: ErrorId, version: Version = None
    ) -> Annotated[CallToolResult, ErrorDetails]:
        with refusals():
            return await q.entry_result(ctx, id, version)

    @server.tool(description=SEARCH_ERRORS, annotations=READ_ONLY)
    def search_errors(
        ctx: Context,
        query: Query = "",
        exception: ExceptionName = None,
        flag: Flag = None,
        limit: Annotated[int, Field(ge=1, le=20, description="most hits to return")] = 10,
    ) -> Annotated[CallToolResult, SearchAnswer]:
        with refusals():
            answer = q.search(ctx, query, exception, flag, limit)
        return tool_result(search_markdown(answer), answer)


def _add_resource_and_prompt(server: MCPServer[Any], q: Questions) -> None:
    @server.resource(
        "errkb://errors/{id}",
        name="error",
        description="The entry of one error as compact Markdown (what get_error returns).",
        mime_type="text/markdown",
    )
    async def error_resource(id: str, ctx: Context) -> str:
        with resource_refusals():
            return error_markdown(await q.details(ctx, id, None))

    @server.prompt(name="explain_traceback", title="Explain this traceback", description=PROMPT)
    async def explain_traceback(
        ctx: Context,
        traceback: Annotated[str, Field(description="the traceback or log the user got")],
    ) -> list[UserMessage]:
        with refusals(_bad_params):
            return [UserMessage(await q.explained(ctx, traceback))]


class StrictServer(MCPServer[Any]):
    """The SDK's server, with each tool's arguments checked strictly first (`arguments`)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            check_arguments(tool, arguments)
        return await super().call_tool(name, arguments, context)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"There is no prompt {name!r}.")
        given = arguments or {}
        names = [a.name for a in prompt.arguments or ()]
        for argument in prompt.arguments or ():
            if argument.required and argument.name not in given:
                raise MCPError(
                    INVALID_PARAMS, f"The prompt {name} needs the argument {argument.name!r}."
                )
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise MCPError(
                INVALID_PARAMS,
                f"The prompt {name} takes no argument {unknown[0]!r}; its arguments are "
                f"{', '.join(names)}.",
            )
        return await super().get_prompt(name, arguments, context)


def build_server(
    reader_of: Callable[[], Reader], base_url_of: Callable[[Context], str]
) -> MCPServer[Any]:
    """An MCP server over the read side; `reader_of` gives the reader once the backing is up."""
    # The SDK's constructor configures the root logger (logging.basicConfig with its own
    # handler); a server built inside errkb's app must leave the process's logging as it was.
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    server: MCPServer[Any] = StrictServer(
        "errkb", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )
    root.setLevel(level)
    root.handlers[:] = handlers
    # The SDK wraps each message in an OpenTelemetry span by default ("drop it from this list to
    # opt out", says its docstring). errkb installs no exporter, so the spans went nowhere and
    # cost every call its time.
    server.middleware[:] = [
        m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"
    ]
    q = Questions(reader_of, base_url_of)
    _add_tools(server, q)
    for tool in server._tool_manager.list_tools():  # say so in the schema, as it is checked
        tool.parameters["additionalProperties"] = False
    _add_resource_and_prompt(server, q)
    return server
