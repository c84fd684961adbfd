"""The questions behind the MCP tools, answered over the read side and cut to an agent's size.

Kept apart from the tool registration (`server`) so that the tools, the resource and the prompt
share one way to each answer. Every refusal is an `ErrkbError` with a sentence for a person;
`server` turns it into a tool error.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from errkb.service.entries.cache import EntryCache
from errkb.service.mcp.answers import (
    ErrorDetails,
    MatchAnswer,
    SearchAnswer,
    error_details,
    match_item,
    search_answer,
)
from errkb.service.mcp.markdown import error_markdown, match_markdown
from errkb.service.mcp.reading import MAX_LIMIT, Reader
from errkb.service.mcp.texts import check_id, check_text

ANSWERS_KEPT = 1024  # get_error answers kept whole; about 10 KB each


class Answers(EntryCache[CallToolResult]):
    """The last answers of one content key, kept as objects: the SDK takes a `CallToolResult`,
    and parsing it again from stored bytes cost a fifth of the tool's time (profiled). They are
    never changed after they are made, so concurrent calls share them."""

    def __init__(self, most: int) -> None:
        super().__init__(most, size=lambda _: 1)


def tool_result(markdown: str, structured: BaseModel) -> CallToolResult:
    """Markdown for the model, with its structured copy for programs."""
    return CallToolResult(
        content=[TextContent(type="text", text=markdown)],
        structured_content=structured.model_dump(mode="json"),
    )


class Questions:
    """One server's answers: a reader (ready once the backing is up) and where links point."""

    def __init__(
        self, reader_of: Callable[[], Reader], base_url_of: Callable[[Context], str]
    ) -> None:
        self.reader_of = reader_of
        self.base_url_of = base_url_of
        self._answers = Answers(ANSWERS_KEPT)

    async def matches(
        self, ctx: Context, text: str, version: str | None, limit: int
    ) -> MatchAnswer:
        """The errors a text shows, best first, those a given version raises only."""
        reader = self.reader_of()
        check_text(text, reader.settings.max_body_bytes)
        reader.check_version(version)
        found = await reader.matches(text, limit=MAX_LIMIT if version else limit)
        note = None
        if version is not None:
            kept = [m for m in found if version in m.snapshots]
            if len(kept) < len(found):
                note = f"Matches that {version} does not raise were left out."
            found = kept
        base = self.base_url_of(ctx)
        items = [match_item(m, await reader.entry_now(m.id), base) for m in found[:limit]]
        return MatchAnswer(matches=items, note=note)

    async def details(self, ctx: Context, error_id: str, version: str | None) -> ErrorDetails:
        """One error's compact entry."""
        reader = self.reader_of()
        error_id = check_id(error_id)
        reader.check_version(version)
        return error_details(await reader.entry_now(error_id, version), self.base_url_of(ctx))

    async def entry_result(
        self, ctx: Context, error_id: str, version: str | None
    ) -> CallToolResult:
        """get_error's answer, made once per content key (an agent asks again and again)."""
        reader = self.reader_of()
        error_id = check_id(error_id)
        key = reader.check_version(version)
        item = (error_id, version, self.base_url_of(ctx))
        result = self._answers.get(key, item)
        if result is None:
            d = await self.details(ctx, error_id, version)
            result = tool_result(error_markdown(d), d)
            self._answers.put(key, item, result)
        return result

    def search(
        self, ctx: Context, query: str, exception: str | None, flag: str | None, limit: int
    ) -> SearchAnswer:
        """The first hits of a search, ranked as the HTTP search ranks them."""
        reader = self.reader_of()
        reader.versions()  # an empty knowledge base says so rather than "nothing found"
        results = reader.search(query, exception=exception, flag=flag, limit=limit)
        return search_answer(results, self.base_url_of(ctx))

    async def explained(self, ctx: Context, traceback: str) -> str:
        """The traceback, what errkb matched, and the best match's entry, for the model."""
        answer = await self.matches(ctx, traceback, None, 3)
        best = answer.matches[0].id if answer.matches else None
        entry = await self.details(ctx, best, None) if best else None
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
