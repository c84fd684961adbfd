"""Service-wide reads: the ingest state every cached response is keyed by, and the health ping.

The ingest state is read on every cacheable request, so it is one small statement on a pooled
connection (no ORM session): the generation `meta` row that every ingest bumps in the same
transaction as its snapshot, and the AI-prose counter that `errkb explain` bumps.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select, text, update
from sqlalchemy.orm import Session

from errkb.core.models import Meta, Snapshot

# The session type the request dependencies hand out; routes annotate with this alias.
DbSession = Session
AI_GENERATION = "ai_generation"


@dataclass(frozen=True)
class KbVersion:
    """What the knowledge base's content is keyed by: changes exactly when an answer may."""

    key: str  # "generation.ai_generation"
    last_modified: datetime | None


# Constant SQL that both backends accept: run on the driver's cursor, since this read happens on
# every cacheable request and SQLAlchemy's statement layer would cost several times the read.
_KB_KEY_SQL = f"SELECT key, value FROM meta WHERE key IN ('generation', '{AI_GENERATION}')"


def kb_key(engine: Engine) -> str:
    """The current content key (one indexed read of the `meta` table)."""
    conn = engine.raw_connection()
    try:
        cursor = conn.cursor()
        cursor.execute(_KB_KEY_SQL)
        rows = dict(cursor.fetchall())
        cursor.close()
    finally:
        conn.close()  # back to the pool, which ends the read transaction
    return f"{rows.get('generation') or '0'}.{rows.get(AI_GENERATION) or '0'}"


def bump_ai_generation(session: Session) -> None:
    """Count one change of stored AI prose (in the caller's transaction): cached entries expire."""
    current = session.execute(select(Meta.value).where(Meta.key == AI_GENERATION)).scalar()
    if current is None:
        session.add(Meta(key=AI_GENERATION, value="1"))
    else:
        session.execute(
            update(Meta).where(Meta.key == AI_GENERATION).values(value=str(int(current) + 1))
        )


def last_ingest(engine: Engine) -> datetime | None:
    """When the newest snapshot was ingested (UTC, whole seconds, as HTTP dates carry)."""
    with engine.connect() as conn:
        value = conn.execute(select(func.max(Snapshot.ingested_at))).scalar()
    if value is None:
        return None
    if isinstance(value, str):  # SQLite returns aggregates of DateTime columns as text
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


class VersionTracker:
    """The knowledge base's current version: the key is read per request, the date per key."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._current = KbVersion("", None)

    def current(self) -> KbVersion:
        """The version right now (one small query; the date is re-read only when it moves)."""
        key = kb_key(self._engine)
        known = self._current
        if known.key == key:
            return known
        fresh = KbVersion(key, last_ingest(self._engine))
        with self._lock:
            self._current = fresh
        return fresh


def ping(session: Session) -> None:
    """A database round trip."""
    session.execute(text("SELECT 1"))
