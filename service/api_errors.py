"""`GET /api/errors/{id}`: the full entry of one error as JSON."""

from __future__ import annotations

from fastapi import APIRouter, Query

from service.deps import SessionDep, SettingsDep
from service.entries import build_entry
from service.schemas import Entry

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
