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
    MatchItem,
    SearchAnswer,
    error_details,
    match_item,
    search_answer,
)
from errkb.service.mcp.markdown import error_markdown, match_markdown
from errkb.service.mcp.reading import Reader
from errkb.service.mcp.texts import check_id, check_text

ANSWERS_KEPT = 1024  # get_error answers kept whole; about 10 KB each
VERSION_POOL = 20  # matches read when a version filters them, before the filter


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
        """The errors a text shows, best first; with `version`, those that version raises.

        A traceback's lines may point to another release than the one the user names (they
        read the version wrong, or pasted an older log): the error is kept when the version
        raises it, and the answer says which releases the lines match."""
        reader = self.reader_of()
        check_text(text, reader.settings.max_body_bytes)
        version = reader.version_label(version)
        reader.check_version(version)
        found = await reader.matches(text, limit=VERSION_POOL if version else limit)
        notes: list[str] = []
        if version is not None:
            # A match no frame pinned lists every release that raises it; a pinned one lists
            # those whose lines agree, so its entry tells whether the version raises it too.
            kept = [
                m
                for m in found
                if version in m.snapshots
                or (m.site is not None and version in await self._raised_in(reader, m.id))
            ]
            if len(kept) < len(found):
                left = len(found) - len(kept)
                notes.append(f"{left} error(s) that {version} does not raise were left out.")
            found = kept[:limit]
        entries = {m.id: await reader.entry_now(m.id) for m in found[:limit]}
        base = self.base_url_of(ctx)
        items = [match_item(m, entries[m.id], base) for m in found[:limit]]
        lines = _lines_note(items, version)
        if lines:
            notes.insert(0, lines)
        return MatchAnswer(matches=items, note=" ".join(notes) or None)

    @staticmethod
    async def _raised_in(reader: Reader, error_id: str) -> list[str]:
        """The releases that raise the error, as its entry lists them."""
        return (await reader.entry_now(error_id)).timeline.present_in

    async def details(self, ctx: Context, error_id: str, version: str | None) -> ErrorDetails:
        """One error's compact entry."""
        reader = self.reader_of()
        error_id = check_id(error_id)
        version = reader.version_label(version)
        reader.check_version(version)
        return error_details(await reader.entry_now(error_id, version), self.base_url_of(ctx))

    async def entry_result(
        self, ctx: Context, error_id: str, version: str | None
    ) -> CallToolResult:
        """get_error's answer, made once per content key (an agent asks again and again)."""
        reader = self.reader_of()
        error_id = check_id(error_id)
        version = reader.version_label(version)
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
        sure = [m for m in answer.matches if m.confidence == "match"]
        entry = await self.details(ctx, sure[0].id, None) if sure else None
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
        elif answer.matches:
            parts.append(
                "errkb has no confident match for this text: the errors above are weak guesses "
                "(score under 0.5). Say so, and do not present them as the cause; explain the "
                "error from the text itself."
            )
        else:
            parts.append("The knowledge base does not know this error: say so, then explain it.")
        return "\n\n".join(parts)


def _lines_note(items: list[MatchItem], version: str | None) -> str | None:
    """Which releases the traceback's lines point to, when a frame pinned the best match's
    site; said outright when they are not the version the user named."""
    pinned = next((m.site for m in items if m.site is not None), None)
    if pinned is None or not pinned.lines_match:
        return None
    newest = pinned.lines_match[-1]
    if version is not None and version not in pinned.lines_match:
        return (
            f"The lines of this traceback match {newest} (not {version}): check which sglang "
            "version the user runs."
        )
    return f"The lines of this traceback match {_releases(pinned.lines_match)}."


def _releases(labels: list[str]) -> str:
    if len(labels) == 1:
        return labels[0]
    if len(labels) <= 3:
        return ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"{labels[-1]} and older versions"
