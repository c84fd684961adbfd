"""Bulk inserts the store's writers share: batched, keyed on conflict, JSON already serialized."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import JSON, Connection, Table, select
from sqlalchemy.dialects import postgresql, sqlite

T = TypeVar("T")
BATCH = 500  # rows per statement and keys per IN (...) list: well under every bind limit


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def insert_ignore(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows, leaving any row whose primary key already exists untouched."""
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    keys = [c.name for c in table.primary_key.columns]
    stmt = dialect.insert(table).on_conflict_do_nothing(index_elements=keys)
    for chunk in batches(rows):
        conn.execute(stmt, list(chunk))


def insert_plain(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    keep: Sequence[str] = (),
) -> None:
    """Insert rows given as tuples in `columns` order, JSON columns already serialized, with
    one driver executemany per batch: SQLAlchemy's per-value processing of thousands of rows
    cost more than the inserts themselves. With `keep` (a unique key), a row whose key exists
    already is left as it is (`ON CONFLICT DO NOTHING`, common to both dialects)."""
    quote = conn.dialect.identifier_preparer.quote
    json_columns = {c.name for c in table.columns if isinstance(c.type, JSON)}
    qmark = conn.dialect.paramstyle == "qmark"  # SQLite; psycopg takes %s
    marks = ", ".join("?" if qmark else "%s::json" if c in json_columns else "%s" for c in columns)
    sql = f"INSERT INTO {quote(table.name)} ({', '.join(map(quote, columns))}) VALUES ({marks})"
    if keep:
        sql += f" ON CONFLICT ({', '.join(map(quote, keep))}) DO NOTHING"
    for chunk in batches(rows):
        conn.exec_driver_sql(sql, list(chunk))


def insert_bodies(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    bodies: dict[str, tuple[Any, ...]],
    finish: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None,
) -> None:
    """Add the content-addressed rows (site or flag bodies, keyed by `hash`) not stored yet:
    most of a snapshot's are known from earlier ones, so their hashes are looked up first
    rather than their content sent again to be ignored. `finish` completes each row to add
    (the costly part of a row, done only for those)."""
    wanted = sorted(bodies)
    known: set[str] = set()
    for chunk in batches(wanted):
        known.update(conn.execute(select(table.c.hash).where(table.c.hash.in_(chunk))).scalars())
    insert_plain(
        conn,
        table,
        columns,
        [finish(bodies[h]) if finish else bodies[h] for h in wanted if h not in known],
        keep=("hash",),  # a concurrent ingest may have added it meanwhile
    )
