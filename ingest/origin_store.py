"""The value-origin index's store across processes: a SQLite file in the ingest's cache folder.

The index (`ingest.origins.kept`) keeps module facts and file scans per file content, and origins
per site; this store lets a second process (the same releases into another database, a
re-ingest, the next release) read them instead of tracing again. Keys carry a digest of the
code that made each value, so a change to the rules misses. The file is a cache: it may be
deleted at any time, and a store that cannot be opened or written is silently not used.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

FILE_NAME = "origins.sqlite3"
TABLES = ("facts", "scans", "origins")
MAX_BYTES = 2_000_000_000  # past this the file is emptied on open (its rows are all re-made)
_BATCH = 500
_LEVEL = 1  # zlib: these blobs are written once per content and read many times


class OriginStore:
    """Bytes by key in three tables of one SQLite file, compressed; safe for several processes."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE_NAME
        self._conn: sqlite3.Connection | None = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if self.path.exists() and self.path.stat().st_size > MAX_BYTES:
                self.path.unlink()
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            for table in TABLES:
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} "
                    "(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID"
                )
            self._conn = conn
        except (OSError, sqlite3.Error):
            self._conn = None

    def get(self, table: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The values held of these keys."""
        out: dict[bytes, bytes] = {}
        if self._conn is None or table not in TABLES:
            return out
        try:
            for start in range(0, len(keys), _BATCH):
                batch = keys[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                query = f"SELECT key, value FROM {table} WHERE key IN ({marks})"
                for key, value in self._conn.execute(query, batch):
                    out[key] = zlib.decompress(value)
        except (sqlite3.Error, zlib.error):
            return out
        return out

    def has(self, table: str, keys: Sequence[bytes]) -> set[bytes]:
        """Which of these keys are held (their values left unread)."""
        out: set[bytes] = set()
        if self._conn is None or table not in TABLES:
            return out
        try:
            for start in range(0, len(keys), _BATCH):
                batch = keys[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                query = f"SELECT key FROM {table} WHERE key IN ({marks})"
                out.update(key for (key,) in self._conn.execute(query, batch))
        except sqlite3.Error:
            return set()
        return out

    def put(self, table: str, rows: Mapping[bytes, bytes]) -> None:
        """Keep these values (in one transaction)."""
        if self._conn is None or table not in TABLES:
            return
        packed = [(k, zlib.compress(v, _LEVEL)) for k, v in rows.items()]
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                f"INSERT OR IGNORE INTO {table} (key, value) VALUES (?, ?)", packed
            )
            self._conn.execute("COMMIT")
        except sqlite3.Error:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def close(self) -> None:
        """Close the file."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> OriginStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
