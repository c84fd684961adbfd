"""Reads of the ingested snapshots: the list, and labels by id for the pages."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from errkb.core.models import Repo, Snapshot
from errkb.service.snapshots.schemas import SnapshotOut


def list_snapshots(session: Session, repo: str | None = None) -> list[SnapshotOut]:
    """Every ingested snapshot (of `repo`, or of all), by repo then sort key, oldest first."""
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


def labels_by_id(session: Session) -> dict[int, str]:
    """Snapshot id -> label."""
    return {i: label for i, label in session.execute(select(Snapshot.id, Snapshot.label))}
