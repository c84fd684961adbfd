"""Service-wide reads: the ingest state every cached response is keyed by, and the health ping.

The ingest state is checked on every cacheable request, so it costs next to nothing: the
generation `meta` row that every ingest bumps in the same transaction as its snapshot, and the
AI-prose counter that `errkb explain` bumps, read on a connection kept for that alone, and on
SQLite only when `PRAGMA data_version` says another connection has committed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, select, text, update
from sqlalchemy.orm import Session

from errkb.core.models import Meta, Snapshot

# The session type the request dependencies hand out; routes annotate with this alias.
DbSession = Session
DbEngine = Engine  # for the read side's few reads that skip the session (see read.entries)
AI_GENERATION = "ai_generation"


@dataclass(frozen=True)
class KbVersion:
    """What the knowledge base's content is keyed by: changes exactly when an answer may."""

    key: str  # "generation.ai_generation"
    last_modified: datetime | None


# Constant SQL that both backends accept: run on the driver's cursor, since this read happens on
# every cacheable request and SQLAlchemy's statement layer would cost several times the read.
_KB_KEY_SQL = f"SELECT key, value FROM meta WHERE key IN ('generation', '{AI_GENERATION}')"


def _key_of(rows: Iterable[Sequence[Any]]) -> str:
    values = {str(k): v for k, v in rows}
    return f"{values.get('generation') or '0'}.{values.get(AI_GENERATION) or '0'}"


def kb_key(engine: Engine) -> str:
    """The current content key (one indexed read of the `meta` table, on a pooled connection)."""
    conn = engine.raw_connection()
    try:
        cursor = conn.cursor()
        cursor.execute(_KB_KEY_SQL)
        rows = cursor.fetchall()
        cursor.close()
    finally:
        conn.close()  # back to the pool, which ends the read transaction
    return _key_of(rows)


class KeyWatch:
    """The content key, read on one connection this watch keeps for itself (no pool checkout).

    On SQLite, `PRAGMA data_version` changes exactly when another connection (of any process)
    has committed, and costs a few microseconds, so the key row is re-read only then. PostgreSQL
    has no such counter: the key row is read on every call, in autocommit (no transaction held).
    A connection that fails is replaced on the next call.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sqlite = engine.dialect.name == "sqlite"
        self._lock = threading.Lock()
        self._conn: Any = None
        self._data_version: object = None
        self._key = ""

    def _connect(self) -> Any:
        fairy = self._engine.raw_connection()
        fairy.detach()  # ours for good: the pool opens another in its place
        conn: Any = fairy.dbapi_connection
        if not self._sqlite:
            conn.autocommit = True  # each read its own statement: no idle transaction
        return conn

    def key(self) -> str:
        """The content key now: committed changes of any process are seen at once."""
        with self._lock:
            try:
                return self._read()
            except Exception:
                self.close()  # a broken connection: start again on a fresh one
                return self._read()

    def _read(self) -> str:
        if self._conn is None:
            self._conn = self._connect()
            self._data_version = None
        cursor = self._conn.cursor()
        try:
            if self._sqlite:
                cursor.execute("PRAGMA data_version")
                version = cursor.fetchone()[0]
                if version == self._data_version:
                    return self._key
                cursor.execute(_KB_KEY_SQL)
                self._key, self._data_version = _key_of(cursor.fetchall()), version
                return self._key
            cursor.execute(_KB_KEY_SQL)
            self._key = _key_of(cursor.fetchall())
            return self._key
        finally:
            cursor.close()

    def close(self) -> None:
        """Close the watch's connection (it reopens when asked again)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001, S110 - closing a connection that already failed
                pass


def session_kb_key(session: Session) -> str:
    """The content key as the session's transaction sees it."""
    return _key_of(session.execute(text(_KB_KEY_SQL)).all())


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
    """The knowledge base's current version: the key is checked per request, the date per key."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._watch = KeyWatch(engine)
        self._lock = threading.Lock()
        self._current = KbVersion("", None)

    def current(self) -> KbVersion:
        """The version right now (see `KeyWatch`; the date is re-read only when the key moves)."""
        key = self._watch.key()
        known = self._current
        if known.key == key:
            return known
        fresh = KbVersion(key, last_ingest(self._engine))
        with self._lock:
            self._current = fresh
        return fresh

    def empty(self) -> bool:
        """True while no snapshot has been ingested (the date of the newest one is None)."""
        return self.current().last_modified is None

    def close(self) -> None:
        """Release the watch's connection."""
        self._watch.close()


def ping(session: Session) -> None:
    """A database round trip."""
    session.execute(text("SELECT 1"))


def kept_rows(session: Session, key: object, load: Callable[[], list[Any]]) -> list[Any]:
    """ORM rows read once per session under `key`: a session lives for one request or one
    chunk of entry docs (dropped if an ingest commits meanwhile). Rows expunged since are
    attached again, so the rows that refer to them find them in the session, as when read."""
    kept: list[Any] | None = session.info.get(key)
    if kept is None:
        kept = session.info[key] = load()
    else:
        for row in kept:
            if row not in session:
                session.add(row)
    return list(kept)
