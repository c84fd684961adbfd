"""`POST /api/match`: which errors a pasted log or traceback shows, ranked, with evidence.

The endpoint is public and fed untrusted text, so the body is read as a stream and refused
(413) as soon as it passes `max_body_bytes`, undecodable bytes are replaced rather than
rejected, and the matching itself (pure and bounded, see `errkb.service.match.matcher`) runs in
a separate process (`errkb.service.read.match_processes`), so health checks and pages keep
answering while it works.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, FastAPI, Query, Request, Response
from pydantic import BaseModel, Field

from errkb.core.errors import BadInput
from errkb.core.settings import Settings
from errkb.service.http_body import read_capped
from errkb.service.plain_routes import query_model
from errkb.service.read.match_processes import MatchProcesses
from errkb.service.read.matches import MatchResponse

router = APIRouter(tags=["match"])


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


_RESPONSES: dict[int | str, dict[str, object]] = {
    413: {"description": "The body is larger than ERRKB_MAX_BODY_BYTES"},
    422: {
        "description": "The limit is not a whole number from 1 to 50, or the body holds no text "
        "to match (empty, or JSON without a `text` string)"
    },
    503: {
        "description": "As many matches as the server takes at once (ERRKB_MATCH_QUEUE) are "
        "already under way; send the text again after the Retry-After seconds",
        "headers": {
            "Retry-After": {
                "description": "seconds to wait before sending the text again",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
}


class MatchQuery(BaseModel):
    """The match's query parameters: declared to FastAPI (the OpenAPI document), validated by
    hand on the plain route that answers (see `errkb.service.plain_routes`)."""

    limit: int = Field(10, ge=1, le=50)


@router.post(
    "/api/match",
    response_model=MatchResponse,
    responses=_RESPONSES,
    openapi_extra={"requestBody": _BODY},
)
async def match(request: Request, query: Annotated[MatchQuery, Query()]) -> Response:
    """Match pasted text (text/plain, or JSON `{"text": ...}`) against the knowledge base.

    The answer is a `MatchResponse`, serialized by the match process (see `match_json`)."""
    return await _answer(request, query.limit)


async def match_by_hand(request: Request) -> Response:
    """`match`, its parameters validated by hand."""
    return await _answer(request, query_model(MatchQuery, request).limit)


async def _answer(request: Request, limit: int) -> Response:
    settings: Settings = request.app.state.settings
    matcher: MatchProcesses = request.app.state.matcher
    with matcher.admitted():  # before the body is read: a refused request costs nothing
        body = await read_capped(request, settings.max_body_bytes)
        if not body:
            raise BadInput("the request body is empty: send the log text to match", loc=("body",))
        found = await matcher.match_json(
            body,
            request.headers.get("content-type", ""),
            limit=limit,
            public_url=settings.public_url,
        )
    return Response(found, media_type="application/json")


def install_matcher(app: FastAPI) -> None:
    """Add the route and start the match processes when the app starts."""
    app.include_router(router)

    def start(app: FastAPI) -> None:
        settings: Settings = app.state.settings
        app.state.matcher = MatchProcesses(
            settings.resolved_database_url,
            refresh_seconds=settings.match_refresh_seconds,
            processes=settings.match_processes,
            nice=settings.match_nice,
            queue_limit=settings.match_queue,
            cache_dir=settings.cache_dir,
        )
        app.state.matcher.warm()  # as before: the app is ready once its matcher index is

    def stop(app: FastAPI) -> None:
        app.state.matcher.close()

    app.state.startup_hooks.append(start)
    app.state.shutdown_hooks.append(stop)
