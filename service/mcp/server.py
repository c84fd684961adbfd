"""errkb as an MCP server: three tools, one resource template and one prompt for coding agents.

A coding agent that reads an sglang traceback should be able to ask "which error is this, and
what fixes it?" without scraping pages. Each tool's description says when to use it, because
that is what a model reads to choose; each answer is compact Markdown for the model beside a
structured copy for programs, and points to the full page. Bad arguments come back as tool
errors (`isError`) with one plain sentence, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from errkb.core.errors import ErrkbError
from errkb.service.mcp.answers import (
    ErrorDetails,
    MatchAnswer,
    SearchAnswer,
    error_details,
    match_item,
    search_answer,
)
from errkb.service.mcp.markdown import error_markdown, match_markdown, search_markdown
from errkb.service.mcp.reading import MAX_LIMIT, Reader
from errkb.service.mcp.texts import (
    GET_ERROR,
    INSTRUCTIONS,
    MATCH_ERROR,
    PROMPT,
    SEARCH_ERRORS,
    check_id,
    check_text,
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

Version = Annotated[
    str | None,
    Field(description="an ingested sglang version such as 0.5.18; omit it for all versions"),
]


def _result(markdown: str, structured: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=markdown)],
        structured_content=structured.model_dump(mode="json"),
    )


def build_server(
    reader_of: Callable[[], Reader], base_url_of: Callable[[Context], str]
) -> MCPServer:
    """An MCP server over the read side; `reader_of` gives the reader once the backing is up."""
    server: MCPServer[Any] = MCPServer(
        "errkb", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )

    async def answer_match(ctx: Context, text: str, version: str | None, limit: int) -> MatchAnswer:
        reader = reader_of()
        check_text(text, reader.settings.max_body_bytes)
        reader.check_version(version)
        found = await reader.matches(text, limit=MAX_LIMIT if version else limit)
        note = None
        if version is not None:
            kept = [m for m in found if version in m.snapshots]
            if len(kept) < len(found):
                note = f"Matches that {version} does not raise were left out."
            found = kept
        base = base_url_of(ctx)
        items = [match_item(m, await reader.entry_now(m.id), base) for m in found[:limit]]
        return MatchAnswer(matches=items, note=note)

    @server.tool(description=MATCH_ERROR, annotations=READ_ONLY)
    async def match_error(
        ctx: Context,
        text: Annotated[str, Field(description="the pasted log, error line or traceback")],
        version: Version = None,
        limit: Annotated[int, Field(ge=1, le=5, description="most matches to return")] = 3,
    ) -> Annotated[CallToolResult, MatchAnswer]:
        try:
            answer = await answer_match(ctx, text, version, limit)
        except ErrkbError as exc:
            raise ToolError(exc.message) from None
        return _result(match_markdown(answer), answer)

    async def details(ctx: Context, error_id: str, version: str | None) -> ErrorDetails:
        reader = reader_of()
        error_id = check_id(error_id)
        reader.check_version(version)
        return error_details(await reader.entry_now(error_id, version), base_url_of(ctx))

    async def entry_answer(ctx: Context, error_id: str, version: str | None) -> CallToolResult:
        """get_error's answer, rendered once per content key (an agent asks again and again)."""
        reader = reader_of()
        item = ("get_error", check_id(error_id), version, base_url_of(ctx))
        reader.check_version(version)
        key, kept = reader.remembered(item)
        if kept is None:
            d = await details(ctx, error_id, version)
            answer = _result(error_markdown(d), d)
            reader.remember(key, item, answer.model_dump_json().encode())
            return answer
        return CallToolResult.model_validate_json(kept)

    # Async: a warm entry is answered on the event loop, with no hop to a worker thread.
    @server.tool(description=GET_ERROR, annotations=READ_ONLY)
    async def get_error(
        ctx: Context,
        id: Annotated[str, Field(description="the 16-hex-digit error id that a match gave")],
        version: Version = None,
    ) -> Annotated[CallToolResult, ErrorDetails]:
        try:
            return await entry_answer(ctx, id, version)
        except ErrkbError as exc:
            raise ToolError(exc.message) from None

    @server.tool(description=SEARCH_ERRORS, annotations=READ_ONLY)
    def search_errors(
        ctx: Context,
        query: Annotated[str, Field(max_length=500, description="words of the message or path")],
        exception: Annotated[
            str | None, Field(description="only this exception class, e.g. ValueError")
        ] = None,
        flag: Annotated[
            str | None, Field(description="only errors involving this flag, e.g. --tp-size")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=20, description="most hits to return")] = 10,
    ) -> Annotated[CallToolResult, SearchAnswer]:
        try:
            reader = reader_of()
            reader.versions()  # an empty knowledge base says so rather than "nothing found"
            results = reader.search(query, exception=exception, flag=flag, limit=limit)
        except ErrkbError as exc:
            raise ToolError(exc.message) from None
        answer = search_answer(results, base_url_of(ctx))
        return _result(search_markdown(answer), answer)

    @server.resource(
        "errkb://errors/{id}",
        name="error",
        description="The entry of one error as compact Markdown (what get_error returns).",
        mime_type="text/markdown",
    )
    async def error_resource(id: str, ctx: Context) -> str:
        try:
            return error_markdown(await details(ctx, id, None))
        except ErrkbError as exc:
            raise ResourceError(exc.message) from None

    @server.prompt(name="explain_traceback", title="Explain this traceback", description=PROMPT)
    async def explain_traceback(
        ctx: Context,
        traceback: Annotated[str, Field(description="the traceback or log the user got")],
    ) -> list[UserMessage]:
        return [UserMessage(await _explained(ctx, traceback))]

    async def _explained(ctx: Context, traceback: str) -> str:
        """The traceback, what errkb matched, and the best match's entry, for the model."""
        try:
            answer = await answer_match(ctx, traceback, None, 3)
            entry = await details(ctx, answer.matches[0].id, None) if answer.matches else None
        except ErrkbError as exc:
            raise ToolError(exc.message) from None
        parts = [
            "A user of sglang got this error. Explain in plain words what went wrong and what "
            "they should do, using the knowledge base's findings below (cite the page link).",
            "Their text:",
            "```\n" + traceback[-4000:] + "\n```",
            "errkb matched it as follows:",
            match_markdown(answer),
        ]
        if entry is not None:
            parts += ["The entry of the best match:", error_markdown(entry)]
        else:
            parts.append("The knowledge base does not know this error: say so, then explain it.")
        return "\n\n".join(parts)

    return server
