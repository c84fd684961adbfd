"""The background file-cache writer on real databases: every queued row lands by `close`, and a
failed write is raised there, not lost in the thread."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from errkb.core.models import FileCache
from errkb.ingest.cache_writer import CacheWriter


def _rows(engine: Engine) -> dict[str, bytes]:
    with engine.connect() as conn:
        return {
            h: bytes(r) for h, r in conn.execute(select(FileCache.content_hash, FileCache.result))
        }


def test_queued_rows_are_all_written_by_close(engine: Engine) -> None:
    writer = CacheWriter(engine, "x:1")
    writer.put({f"h{i}": b"r%d" % i for i in range(700)})  # more than one statement batch
    writer.put({})
    writer.put({"h0": b"other", "last": b"r"})  # an existing key keeps its row
    writer.close()
    rows = _rows(engine)
    assert len(rows) == 701 and rows["h0"] == b"r0" and rows["last"] == b"r"
    writer.put({"again": b"r"})  # usable after close: a new thread
    writer.close()
    assert "again" in _rows(engine)


def test_a_failed_write_is_raised_by_close(engine: Engine) -> None:
    writer = CacheWriter(engine, "x:1")
    writer.put({"ok": b"r"})
    writer.put({"k" * 200: b"r"})  # longer than the key column: PostgreSQL refuses it
    writer.put({"after": b"r"})
    if engine.dialect.name == "sqlite":  # SQLite does not enforce VARCHAR lengths
        writer.put({"bad": None})  # type: ignore[dict-item]  # NOT NULL
    with pytest.raises(Exception):  # noqa: B017 - the driver's own error class
        writer.close()
    rows = _rows(engine)
    assert "ok" in rows and "bad" not in rows
    writer.close()  # the error was raised once
