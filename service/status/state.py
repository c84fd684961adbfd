"""The state of the knowledge base: what it holds per project, its last ingest, its documents.

`errkb status` prints it (with the newest release on the index beside it), and `/healthz`
carries a compact form. Every figure is read from the database: the snapshots, the entry docs
current under the content key, and what the last build of docs recorded (`docs.LAST_BUILD`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from errkb.core.models import Repo
from errkb.service.docstore.queries import meta_value
from errkb.service.entries.docs import LAST_BUILD
from errkb.service.queries import DbSession, session_kb_key
from errkb.service.status.queries import (
    docs_current,
    entry_count,
    repo_snapshot_rows,
    repos_with_snapshots,
)


@dataclass(frozen=True)
class RepoStatus:
    """One project's snapshots and its last ingest."""

    name: str
    pypi_name: str | None
    releases: int  # PyPI releases held
    snapshots: int  # every snapshot: releases, commits, folders
    newest_release: str | None  # the newest release held, in version order
    last_label: str | None  # the snapshot ingested last
    last_ingested_at: datetime | None
    last_seconds: float | None  # how long that ingest took


@dataclass(frozen=True)
class DocsStatus:
    """The entry documents: how many are current, and what the last build did."""

    entries: int  # errors that have an entry
    current: int  # docs current under the content key
    last_rebuilt: int | None  # docs the last build made (the entries the last ingest changed)
    last_kept: int | None
    last_seconds: float | None

    @property
    def all_current(self) -> bool:
        """Every entry is served from its stored doc."""
        return self.current >= self.entries


@dataclass(frozen=True)
class KbStatus:
    """The whole knowledge base's state."""

    repos: list[RepoStatus]
    docs: DocsStatus


def _utc(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):  # SQLite returns some DateTime values as text
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _repo_status(session: DbSession, repo: Repo) -> RepoStatus:
    snaps = repo_snapshot_rows(session, repo.id)
    releases = [s for s in snaps if s.kind == "pypi"]
    last = max(snaps, key=lambda s: _utc(s.ingested_at) or datetime.min.replace(tzinfo=UTC))
    return RepoStatus(
        name=repo.name,
        pypi_name=repo.pypi_name,
        releases=len(releases),
        snapshots=len(snaps),
        newest_release=releases[-1].label if releases else None,
        last_label=last.label,
        last_ingested_at=_utc(last.ingested_at),
        last_seconds=last.seconds,
    )


def docs_status(session: DbSession) -> DocsStatus:
    """How many entry docs are current, and what the last build did."""
    entries = entry_count(session)
    current = docs_current(session, session_kb_key(session))
    raw = meta_value(session, LAST_BUILD)
    build = json.loads(raw) if raw else {}
    return DocsStatus(
        entries=entries,
        current=current,
        last_rebuilt=build.get("rebuilt"),
        last_kept=build.get("kept"),
        last_seconds=build.get("seconds"),
    )


def kb_status(session: DbSession) -> KbStatus:
    """The knowledge base's state, per project that has at least one snapshot."""
    return KbStatus(
        repos=[_repo_status(session, r) for r in repos_with_snapshots(session)],
        docs=docs_status(session),
    )


def compact(status: KbStatus) -> dict[str, Any]:
    """The state in a few fields, for `/healthz`."""
    last = max(
        (r for r in status.repos if r.last_ingested_at is not None),
        key=lambda r: r.last_ingested_at,  # type: ignore[arg-type,return-value]
        default=None,
    )
    return {
        "snapshots": sum(r.snapshots for r in status.repos),
        "newest": {r.name: r.newest_release for r in status.repos},
        "last_ingest": last.last_ingested_at.isoformat()
        if last and last.last_ingested_at
        else None,
        "entries": status.docs.entries,
        "docs_current": status.docs.current,
    }
