"""Search: the errors whose message, template, paths or flags match words, filtered, paged.

The index page, `GET /api/errors`, the module and flag pages, the export and the MCP server all
search through `search` (a page of the errors matching words and filters, best first; `BadInput`
for a limit outside 1..MAX_LIMIT or a cursor that no page gave), so they rank alike.
"""

from __future__ import annotations

from errkb.service.search.queries import CURSOR_PATTERN, MAX_LIMIT, normalize_flag
from errkb.service.search.queries import search_errors as search
from errkb.service.search.schemas import SearchHit, SearchResults

__all__ = [
    "CURSOR_PATTERN",
    "MAX_LIMIT",
    "SearchHit",
    "SearchResults",
    "normalize_flag",
    "search",
]
