"""Conditional GETs: pages and entries change only when an ingest bumps the generation.

Every ingest commits a new `meta.generation` with its snapshot, so (generation, URL) identifies a
page's content exactly; the newest snapshot's ingest time is its Last-Modified. A client that
revalidates with either gets `304 Not Modified` without the page being built again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from fastapi import Request, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from errkb.core.models import Meta, Snapshot


@dataclass(frozen=True)
class Validators:
    """The ETag and Last-Modified of one response."""

    etag: str
    last_modified: datetime | None

    def headers(self) -> dict[str, str]:
        """Response headers: the validators, and `no-cache` so clients always revalidate."""
        out = {"ETag": self.etag, "Cache-Control": "no-cache"}
        if self.last_modified is not None:
            out["Last-Modified"] = format_datetime(self.last_modified, usegmt=True)
        return out


def generation(session: Session) -> str:
    """The ingest generation ("0" before any ingest)."""
    value = session.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
    return value or "0"


def last_ingest(session: Session) -> datetime | None:
    """When the newest snapshot was ingested (UTC, whole seconds, as HTTP dates carry)."""
    value = session.execute(select(func.max(Snapshot.ingested_at))).scalar()
    if value is None:
        return None
    if isinstance(value, str):  # SQLite returns aggregates of DateTime columns as text
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


def validators(session: Session, request: Request, *parts: str) -> Validators:
    """Validators for this request's URL (path + query) under the current generation."""
    key = "\x1f".join((generation(session), request.url.path, request.url.query, *parts))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return Validators(f'"{digest}"', last_ingest(session))


def not_modified(request: Request, v: Validators) -> bool:
    """True when the client's cached copy is current (If-None-Match wins over If-Modified-Since)."""
    inm = request.headers.get("if-none-match")
    if inm is not None:
        tags = [t.strip().removeprefix("W/") for t in inm.split(",")]
        return "*" in tags or v.etag in tags
    ims = request.headers.get("if-modified-since")
    if ims and v.last_modified is not None:
        try:
            since = parsedate_to_datetime(ims)
        except (TypeError, ValueError):
            return False
        if since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        return v.last_modified <= since
    return False


def not_modified_response(v: Validators) -> Response:
    """An empty 304 carrying the validators."""
    return Response(status_code=304, headers=v.headers())
