"""`GET /api/errors`: the search of the index page as JSON, with cursor pagination."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from errkb.service.deps import SessionDep
from errkb.service.http_cache import Fresh
from errkb.service.search.queries import CURSOR_PATTERN, MAX_LIMIT, search_errors
from errkb.service.search.schemas import SearchResults

router = APIRouter()


@router.get("/api/errors", response_model=SearchResults)
def search(
    session: SessionDep,
    v: Fresh,
    response: Response,
    q: Annotated[str, Query(max_length=500, description="words; a chunk is a phrase")] = "",
    snapshot: Annotated[str | None, Query(description="snapshot label, e.g. 0.5.18")] = None,
    path: Annotated[str | None, Query(description="repo path prefix")] = None,
    flag: Annotated[str | None, Query(description="involved flag, e.g. --tp-size")] = None,
    exception: Annotated[
        str | None,
        Query(max_length=200, description="exception class, or a base of it: RuntimeError"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    cursor: Annotated[
        str | None, Query(pattern=CURSOR_PATTERN, description="next_cursor of the previous page")
    ] = None,
) -> SearchResults:
    """Errors whose message, template, paths or flags match `q`, filtered, a page at a time."""
    response.headers.update(v.headers())
    return search_errors(
        session,
        q=q,
        snapshot=snapshot,
        path=path,
        flag=flag,
        limit=limit,
        cursor=cursor,
        exception=exception,
    )
