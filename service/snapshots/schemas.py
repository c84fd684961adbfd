"""Response models of `/api/snapshots`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from errkb.core.records import SnapshotKind
from errkb.service.datetimes import UtcDatetime


class SnapshotOut(BaseModel):
    """One complete snapshot and what its ingest found."""

    repo: str
    label: str
    kind: SnapshotKind
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
