"""`GET /api/snapshots`: what has been ingested, per repo in version order."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel
from sqlalchemy import select

from errkb.core.models import Repo, Snapshot
from errkb.service.datetimes import UtcDatetime
from errkb.service.deps import SessionDep

router = APIRouter()


class SnapshotOut(BaseModel):
    """One complete snapshot and what its ingest found."""

    repo: str
    label: str
    kind: str  # git | pypi | dir
    ref: str | None
    commit: str
    date: UtcDatetime | None
    link_base: str | None
    sort_key: str
    files: int
    files_parsed: int
    cache_hits: int
    skipped: dict[str, Any]
    sites: int
    errors: int
    seconds: float
    ingested_at: UtcDatetime


@router.get("/api/snapshots", response_model=list[SnapshotOut])
def list_snapshots(
    session: SessionDep, repo: str | None = Query(default=None, max_length=200)
) -> list[SnapshotOut]:
    """Every ingested snapshot, grouped by repo and ordered by sort key (oldest first)."""
    query = select(Snapshot, Repo.name).join(Repo, Repo.id == Snapshot.repo_id)
    if repo is not None:
        query = query.where(Repo.name == repo)
    rows = session.execute(query.order_by(Repo.name, Snapshot.sort_key, Snapshot.id)).all()
    return [
        SnapshotOut(
            repo=name,
            label=s.label,
            kind=s.kind,
            ref=s.ref,
            commit=s.commit,
            date=s.date,
            link_base=s.link_base,
            sort_key=s.sort_key,
            files=s.files,
            files_parsed=s.files_parsed,
            cache_hits=s.cache_hits,
            skipped=s.skipped or {},
            sites=s.sites,
            errors=s.errors,
            seconds=s.seconds,
            ingested_at=s.ingested_at,
        )
        for s, name in rows
    ]
