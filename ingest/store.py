"""The store: the only part of the ingester that uses SQLAlchemy.

A snapshot is written in ONE transaction (`ingest.snapshot_writer`), so readers see either the
whole snapshot or nothing, and a killed ingest leaves the previous complete state.
The file cache is written separately: its rows are content-addressed and idempotent, so
committing them early loses nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from errkb.core.dictionaries import load_missing, store_dictionary
from errkb.core.models import (
    FileCache,
    PackDictionary,
    file_cache_key,
)
from errkb.core.packed import Trained, dictionary_of, is_known, register
from errkb.ingest import snapshot_writer
from errkb.ingest.inserts import BATCH, batches, insert_plain
from errkb.ingest.snapshot_writer import snapshot_id

__all__ = ["batches", "write_snapshot"]

# One writer at a time in this process. The next snapshot's file-cache rows are written while
# this one is stored (`ingest.read_ahead`): SQLite would make one of them wait on the file lock,
# and fail it after its busy timeout, however long the other's transaction is.
_WRITING = threading.Lock()


def write_snapshot(engine: Engine, **parts: Any) -> tuple[int, int] | None:
    """`snapshot_writer.write_snapshot`, while no other thread here writes."""
    with _WRITING:
        return snapshot_writer.write_snapshot(engine, **parts)


# A row written with any function-unit rows ("u:"/"n:" keys, see `ingest.extract.unit_keys`),
# so that one lookup tells whether the incremental extractor has anything to reuse.
UNITS_PRESENT = "units:"


def load_cache(engine: Engine, extractor: str, hashes: Iterable[str]) -> dict[str, bytes]:
    """Cached results (compressed) for the given content hashes under this extractor key.

    Tens of thousands of keys per snapshot (files and function units): the query goes straight
    to the driver, a list of row ids per statement (`= ANY` on PostgreSQL, `IN` on SQLite); a row
    counts only when its key check is the one asked (see `FileCache`).
    """
    wanted = {}
    for h in set(hashes):
        row_id, check = file_cache_key(extractor, h)
        wanted[row_id] = (h, check)
    found: dict[str, bytes] = {}
    if not wanted:
        return found
    ids = sorted(wanted)
    with engine.connect() as conn:
        sql = "SELECT id, key_check, result FROM file_cache WHERE id "
        chunks: list[tuple[str, tuple[Any, ...]]]
        if conn.dialect.paramstyle == "qmark":  # SQLite
            chunks = [(f"{sql}IN ({', '.join('?' * len(c))})", tuple(c)) for c in batches(ids)]
        else:
            chunks = [(f"{sql}= ANY(%s)", (list(c),)) for c in batches(ids, 5 * BATCH)]
        for statement, params in chunks:
            for i, check, b in conn.exec_driver_sql(statement, params).fetchall():
                h, expected = wanted[i]
                if check == expected:
                    found[h] = b if type(b) is bytes else bytes(b)
    return _readable(engine, found)


def _readable(engine: Engine, found: dict[str, bytes]) -> dict[str, bytes]:
    """The rows this process can unpack: a dictionary trained since it started (by another
    ingest) is loaded; a row whose dictionary is not in the database (a cache copied without
    it) counts as a miss, and its file is parsed again."""
    if all(is_known(dictionary_of(b)) for b in found.values()):
        return found
    with Session(engine) as session:
        load_missing(session, found.values())
    return {h: b for h, b in found.items() if is_known(dictionary_of(b))}


def write_cache(engine: Engine, extractor: str, blobs: dict[str, bytes]) -> None:
    """Store per-file results; idempotent, committed on its own.

    Rows go straight to the driver's executemany (thousands of them, small and typed already),
    in id order; existing rows are left untouched.
    """
    if not blobs:
        return
    if any(k[:2] in ("u:", "n:") for k in blobs):
        blobs = {**blobs, UNITS_PRESENT: b""}
    rows = sorted((*file_cache_key(extractor, h), extractor, b) for h, b in blobs.items())
    with _WRITING, engine.begin() as conn:
        insert_plain(
            conn,
            FileCache.__table__,  # type: ignore[arg-type]
            ("id", "key_check", "extractor", "result"),
            rows,
            keep=("id",),
        )


def load_dictionaries(engine: Engine, purpose: str) -> Trained | None:
    """Make every stored dictionary of `purpose` readable here; the one trained on the most
    samples (the one to keep packing with), if any."""
    with Session(engine) as session:
        rows = session.execute(
            select(PackDictionary).where(PackDictionary.purpose == purpose)
        ).scalars()
        best: Trained | None = None
        for row in rows:
            register(row.id, row.data)
            if best is None or row.samples > best.samples:
                best = Trained(row.id, row.data, row.samples)
    return best


def stored_results(engine: Engine, extractor: str, limit: int, min_bytes: int) -> list[bytes]:
    """Up to `limit` cached blobs of this extractor of at least `min_bytes` (a sample to train a
    dictionary on: most rows are markers and statuses, a few bytes each)."""
    table = FileCache.__table__
    with engine.connect() as conn:
        rows = conn.execute(
            select(table.c.result)
            .where(table.c.extractor == extractor, func.length(table.c.result) >= min_bytes)
            .limit(limit)
        )
        return [b if type(b) is bytes else bytes(b) for (b,) in rows]


def save_dictionary(engine: Engine, purpose: str, trained: Trained) -> bool:
    """Store a trained dictionary (committed at once); False when its id is taken."""
    with _WRITING, Session(engine) as session:
        kept = store_dictionary(session, purpose, trained)
        session.commit()
    return kept


def has_cached_units(engine: Engine, extractor: str) -> bool:
    """True when function-unit rows ("u:"/"n:" keys, see `ingest.extract.unit_keys`) exist."""
    return bool(load_cache(engine, extractor, [UNITS_PRESENT]))


def snapshot_exists(engine: Engine, repo_name: str, kind: str, commit: str) -> bool:
    """True when this (repo, kind, commit) snapshot is already complete in the database."""
    with engine.connect() as conn:
        return snapshot_id(conn, repo_name, kind, commit) is not None


# The tables whose statistics steer the read side's plans (PostgreSQL analyzes these by name).
_ANALYZED = ("errors", "occurrences", "error_flags", "snapshot_flags", "search_docs", "entry_docs")


def refresh_statistics(engine: Engine) -> None:
    """Refresh the query planner's statistics after a snapshot is written.

    Without them SQLite guesses that an index on a column with one value (`errors.repo_id`)
    finds ten rows, and answered "these 20 ids of this repo" by scanning the whole repo: 5 ms
    instead of 0.4 for each entry's related errors (measured). On SQLite the statistics are
    sampled (at most 1,000 rows an index), so this takes milliseconds at any size.
    """
    try:
        with _WRITING, engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if engine.dialect.name == "sqlite":
                conn.exec_driver_sql("PRAGMA analysis_limit=1000")
                conn.exec_driver_sql("ANALYZE")
            else:
                conn.exec_driver_sql("ANALYZE " + ", ".join(_ANALYZED))
    except OperationalError:  # hints only: a database busy elsewhere is not worth failing
        return


def compact(engine: Engine) -> tuple[int, int] | None:
    """Rewrite a SQLite database file without its free pages; (bytes before, bytes after), or
    None on other databases (PostgreSQL's autovacuum does this itself).

    A big ingest leaves the file about a tenth larger than its contents (B-tree pages split as
    rows arrive in hash order); run once after one, VACUUM takes seconds.
    """
    if engine.dialect.name != "sqlite" or engine.url.database in (None, "", ":memory:"):
        return None
    path = Path(str(engine.url.database))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        before = path.stat().st_size
        conn.exec_driver_sql("VACUUM")
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    return before, path.stat().st_size
