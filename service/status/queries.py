"""The SQL of the knowledge base's state: snapshots per repo, entries, current docs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from errkb.core.cache_models import EntryDoc
from errkb.core.models import Occurrence, Repo, Snapshot


def repos_with_snapshots(session: Session) -> list[Repo]:
    """The repos that hold at least one snapshot, by name."""
    held = select(Snapshot.repo_id).distinct()
    return list(session.scalars(select(Repo).where(Repo.id.in_(held)).order_by(Repo.name)))


def repo_snapshot_rows(session: Session, repo_id: int) -> list[Any]:
    """A repo's snapshots (label, kind, ingest time and duration) in version order."""
    return list(
        session.execute(
            select(Snapshot.label, Snapshot.kind, Snapshot.ingested_at, Snapshot.seconds)
            .where(Snapshot.repo_id == repo_id)
            .order_by(Snapshot.sort_key, Snapshot.id)
        )
    )


def entry_count(session: Session) -> int:
    """How many errors have an entry (at least one occurrence)."""
    return int(session.execute(select(func.count(distinct(Occurrence.error_id)))).scalar_one())


def docs_current(session: Session, key: str) -> int:
    """How many entry docs were built (or kept) under the content key `key`."""
    return int(
        session.execute(
            select(func.count()).select_from(EntryDoc).where(EntryDoc.content_key == key)
        ).scalar_one()
    )
