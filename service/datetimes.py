"""Datetimes in responses: always timezone-aware UTC, whichever database they came from.

PostgreSQL hands back aware values, SQLite naive ones (stored as UTC); the OpenAPI document
promises RFC 3339 `date-time`, which needs an offset. Response models use `UtcDatetime`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator


def as_utc(value: datetime) -> datetime:
    """The same instant as an aware UTC datetime (a naive value is taken to be UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
