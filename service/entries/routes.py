"""`GET /api/errors/{id}`: the full entry of one error as JSON."""

from __future__ import annotations

from fastapi import APIRouter, Query

from errkb.service.deps import SessionDep, SettingsDep
from errkb.service.entries.build import build_entry
from errkb.service.entries.schemas import Entry

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
