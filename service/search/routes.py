"""`GET /api/errors`: the search of the index page as JSON, with cursor pagination.

A search runs three queries and builds its hits, a few milliseconds of one core; the answer only
changes when the knowledge base does. So, like an entry, each answer is kept per content key in
the process's entry cache, and a repeated search (the index page's, a client paging through)
is answered on the event loop from its bytes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from errkb.service.entries.cache import EntryCache
from errkb.service.http_cache import NOT_MODIFIED, fresh_validators
from errkb.service.plain_routes import query_model
from errkb.service.read.search import CURSOR_PATTERN, MAX_LIMIT, SearchResults
from errkb.service.read.search import search as search_errors

router = APIRouter()
SearchAsked = tuple[str, str, str | None, str | None, str | None, int, str | None, str | None]


def search_json(request: Request, version_key: str, asked: SearchAsked) -> bytes:
    """The search's JSON bytes, from the cache or run now (and kept under `version_key`)."""
    _, q, snapshot, path, flag, limit, cursor, exception = asked

    def run() -> bytes:
        with request.app.state.sessions() as session:
            results = search_errors(
                session,
                q=q,
                snapshot=snapshot,
                path=path,
                flag=flag,
                limit=limit,
                cursor=cursor,
                exception=exception,
            )
        return results.model_dump_json().encode()

    cache: EntryCache[bytes] = request.app.state.entries
    return cache.get_or_build(version_key, asked, run)


class SearchQuery(BaseModel):
    """The search's query parameters, in one place: FastAPI's route declares them in the OpenAPI
    document, and the plain route that answers (`search_by_hand`) validates them by hand."""

    q: str = Field("", max_length=500, description="words; a chunk is a phrase")
    snapshot: str | None = Field(None, description="snapshot label, e.g. 0.5.18")
    path: str | None = Field(None, description="repo path prefix")
    flag: str | None = Field(None, description="involved flag, e.g. --tp-size")
    exception: str | None = Field(
        None, max_length=200, description="exception class, or a base of it: RuntimeError"
    )
    limit: int = Field(20, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(
        None, pattern=CURSOR_PATTERN, description="next_cursor of the previous page"
    )


@router.get("/api/errors", response_model=SearchResults, responses=NOT_MODIFIED)
async def search(request: Request, query: Annotated[SearchQuery, Query()]) -> Response:
    """Errors whose message, template, paths or flags match `q`, filtered, a page at a time."""
    return await _answer(request, query)


async def search_by_hand(request: Request) -> Response:
    """`search`, its parameters validated by hand (see `errkb.service.plain_routes`)."""
    return await _answer(request, query_model(SearchQuery, request))


async def _answer(request: Request, query: SearchQuery) -> Response:
    v = fresh_validators(request)  # 304 when the client's copy is current
    asked: SearchAsked = (
        "search",
        query.q,
        query.snapshot,
        query.path,
        query.flag,
        query.limit,
        query.cursor,
        query.exception,
    )
    cache: EntryCache[bytes] = request.app.state.entries
    body = cache.get(v.version.key, asked)
    if body is None:  # run off the event loop: three queries and the hits' hydration
        body = await run_in_threadpool(search_json, request, v.version.key, asked)
    return Response(body, media_type="application/json", headers=v.headers())
