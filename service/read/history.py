"""The history of an error: every occurrence (one per snapshot per site), a page at a time.

The entry itself carries the summary of the history (its timeline and site histories); this is
the full list behind it, newest snapshot first.
"""

from __future__ import annotations

from errkb.core.settings import Settings
from errkb.service.entries.occurrences import OCCURRENCE_CURSOR, occurrence_page
from errkb.service.entries.schemas import OccurrencePage
from errkb.service.queries import DbSession

__all__ = ["OCCURRENCE_CURSOR", "OccurrencePage", "occurrences"]


def occurrences(
    session: DbSession,
    error_id: str,
    *,
    cursor: str | None = None,
    limit: int = 50,
    settings: Settings | None = None,
) -> OccurrencePage:
    """One page of an error's occurrences; `cursor` is the previous page's `next_cursor`."""
    return occurrence_page(session, error_id, cursor=cursor, limit=limit, settings=settings)
