"""`GET /api/snapshots`: what has been ingested, per repo in version order."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response

from errkb.service.deps import SessionDep
from errkb.service.http_cache import NOT_MODIFIED, Fresh
from errkb.service.read.browse import SnapshotOut, list_snapshots

router = APIRouter()


@router.get("/api/snapshots", response_model=list[SnapshotOut], responses=NOT_MODIFIED)
def snapshots(
    session: SessionDep,
    v: Fresh,
    response: Response,
    repo: str | None = Query(default=None, max_length=200),
) -> list[SnapshotOut]:
    """Every ingested snapshot, grouped by repo and ordered by sort key (oldest first)."""
    response.headers.update(v.headers())
    return list_snapshots(session, repo)
