"""Response models of the search (`GET /api/errors`, the index and browse pages)."""

from __future__ import annotations

from pydantic import BaseModel


class SearchHit(BaseModel):
    """One error in a result list."""

    id: str
    title: str
    exception: str
    message: str
    url: str
    in_message: bool  # the query matched the message itself, not only paths or flags
    snapshots: list[str]  # labels where it occurs, oldest first
    where: str | None = None  # "path:line" in the newest snapshot that has it
    test_code: bool = False  # raised only in the project's own tests: listed after the rest


class SearchResults(BaseModel):
    """A page of hits, the total count and the cursor of the next page."""

    q: str = ""
    snapshot: str | None = None
    path: str | None = None
    flag: str | None = None
    exception: str | None = None  # class filter: the class or one of its bases
    total: int
    limit: int
    items: list[SearchHit]
    next_cursor: str | None = None
    # Plain sentences about the filters: a flag or class that no ingested version knows.
    notes: list[str] = []
