"""`POST /api/match`: which errors a pasted log or traceback shows, ranked, with evidence.

The endpoint is public and fed untrusted text, so the body is read as a stream and refused
(413) as soon as it passes `max_body_bytes`, undecodable bytes are replaced rather than
rejected, and the matching itself (pure and bounded, see `service.matcher`) runs off the event
loop, in a small pool of its own (`ERRKB_MATCH_THREADS`): matching is CPU work holding the GIL,
so however many matches arrive at once, only that many compete with the loop, and health checks,
pages and the other routes (in Starlette's thread pool) keep answering. Others wait their turn.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from pydantic import BaseModel, Field

from errkb.core.errors import BadInput, BodyTooLarge
from errkb.core.settings import Settings
from errkb.service.match.matcher import Match, match_text
from errkb.service.match.matcher.live import LiveIndex

router = APIRouter(tags=["match"])


class Span(BaseModel):
    """Character offsets of the matched text in the input (end exclusive)."""

    start: int
    end: int


class MatchedSite(BaseModel):
    """The raise site a traceback frame pinned."""

    path: str
    line: int
    function: str


class MatchOut(BaseModel):
    """One error the text shows."""

    id: str
    title: str
    score: float = Field(description="0-1; >= 0.8: the message is shown; < 0.5: a weak guess")
    span: Span
    params: dict[str, str] = Field(description="placeholder expression -> captured value")
    site: MatchedSite | None
    snapshots: list[str] = Field(description="ingested snapshots consistent with the input")
    url: str


class MatchResponse(BaseModel):
    """Ranked matches, best first; empty when the text shows no known error."""

    matches: list[MatchOut]


_BODY = {
    "required": True,
    "content": {
        "text/plain": {"schema": {"type": "string", "minLength": 1}},
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            }
        },
    },
}


@router.post("/api/match", response_model=MatchResponse, openapi_extra={"requestBody": _BODY})
async def match(request: Request, limit: int = Query(10, ge=1, le=50)) -> MatchResponse:
    """Match pasted text (text/plain, or JSON `{"text": ...}`) against the knowledge base."""
    settings: Settings = request.app.state.settings
    body = await read_capped(request, settings.max_body_bytes)
    if not body:
        raise BadInput("the request body is empty: send the log text to match", loc=("body",))
    content_type = request.headers.get("content-type", "")
    live: LiveIndex = request.app.state.matcher
    pool: ThreadPoolExecutor = request.app.state.match_pool

    def run() -> list[Match]:
        return match_text(live.current(), text_of(body, content_type), limit=limit)

    found = await asyncio.get_running_loop().run_in_executor(pool, run)
    return MatchResponse(matches=[match_out(m, settings.public_url) for m in found])


async def read_capped(request: Request, cap: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed `cap` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise BodyTooLarge(_too_large(cap))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise BodyTooLarge(_too_large(cap))
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(cap: int) -> str:
    return f"request body is larger than {cap} bytes (ERRKB_MAX_BODY_BYTES); send less text"


def text_of(body: bytes, content_type: str) -> str:
    """The text to match: the body itself, or the `text` field of a JSON object."""
    raw = body.decode("utf-8", errors="replace")
    if not content_type.split(";", 1)[0].strip().lower().endswith("json"):
        return raw
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"invalid JSON body: {str(exc)[:200]}", loc=("body",)) from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise BadInput('a JSON body must be an object with a string field "text"', loc=("body",))
    text: str = data["text"]
    return text


def match_out(m: Match, public_url: str) -> MatchOut:
    """The response form of one match."""
    site = None
    if m.site is not None and m.site_line is not None:
        site = MatchedSite(path=m.site.path, line=m.site_line, function=m.site.qualname)
    return MatchOut(
        id=m.entry.id,
        title=m.entry.title,
        score=m.score,
        span=Span(start=m.start, end=m.end),
        params=m.params,
        site=site,
        snapshots=list(m.snapshots),
        url=f"{public_url.rstrip('/')}/errors/{m.entry.id}",
    )


def install_matcher(app: FastAPI) -> None:
    """Add the route and build the index when the app starts (after the engine exists)."""
    app.include_router(router)

    def start(app: FastAPI) -> None:
        settings: Settings = app.state.settings
        app.state.matcher = LiveIndex(
            app.state.engine, refresh_seconds=settings.match_refresh_seconds
        )
        app.state.match_pool = ThreadPoolExecutor(
            max_workers=settings.match_threads, thread_name_prefix="match"
        )

    app.state.startup_hooks.append(start)
