"""`GET /api/errors/{id}`: the full entry of one error as JSON; `.../occurrences`: all its
occurrences, paginated."""

from __future__ import annotations

from fastapi import APIRouter, Query

from errkb.service.deps import SessionDep, SettingsDep
from errkb.service.entries.build import build_entry, occurrence_page
from errkb.service.entries.schemas import Entry, OccurrencePage

router = APIRouter()


@router.get(
    "/api/errors/{error_id}",
    response_model=Entry,
    responses={404: {"description": "Unknown error id, or not raised in that snapshot"}},
)
def get_error(
    error_id: str,
    session: SessionDep,
    settings: SettingsDep,
    snapshot: str | None = Query(
        default=None, max_length=200, description="snapshot label whose occurrence comes first"
    ),
) -> Entry:
    """Everything known about one error: message, explanation, flags, occurrences, history."""
    return build_entry(session, error_id, snapshot=snapshot or None, settings=settings)


@router.get(
    "/api/errors/{error_id}/occurrences",
    response_model=OccurrencePage,
    responses={
        404: {"description": "Unknown error id"},
        422: {"description": "A cursor that no page gave"},
    },
)
def get_occurrences(
    error_id: str,
    session: SessionDep,
    settings: SettingsDep,
    cursor: str | None = Query(default=None, max_length=20, description="next_cursor of a page"),
    limit: int = Query(default=50, ge=1, le=200),
) -> OccurrencePage:
    """Every occurrence of one error (one per snapshot per site), newest snapshot first."""
    return occurrence_page(session, error_id, cursor=cursor, limit=limit, settings=settings)
