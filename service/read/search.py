"""Search: the errors whose message, template, paths or flags match words, filtered, paged.

The index page, `GET /api/errors`, the module and flag pages, the export and the MCP server all
search through `search`, so they rank alike.
"""

from __future__ import annotations

from errkb.service.queries import DbSession
from errkb.service.search.queries import CURSOR_PATTERN, MAX_LIMIT, normalize_flag, search_errors
from errkb.service.search.schemas import SearchHit, SearchResults

__all__ = [
    "CURSOR_PATTERN",
    "MAX_LIMIT",
    "SearchHit",
    "SearchResults",
    "normalize_flag",
    "search",
]


def search(
    session: DbSession,
    *,
    q: str = "",
    snapshot: str | None = None,
    path: str | None = None,
    flag: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> SearchResults:
    """A page of the errors matching `q` and the filters, best first; empty filters are off.

    Raises `BadInput` for a limit outside 1..MAX_LIMIT or a cursor no page gave."""
    return search_errors(
        session,
        q=q,
        snapshot=snapshot,
        path=path,
        flag=flag,
        limit=limit,
        cursor=cursor or None,
    )
