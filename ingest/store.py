"""The store: the only part of the ingester that uses SQLAlchemy.

A snapshot is written in ONE transaction (repo row, snapshot row, new errors, occurrences, flags
and the generation bump), so readers see either the whole snapshot or nothing, and a killed
ingest leaves the previous complete state. The file cache is written separately: its rows are
content-addressed and idempotent, so committing them early loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import JSON, Connection, Engine, Table, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from errkb.core.dictionaries import load_missing, store_dictionary
from errkb.core.models import (
    Error,
    ErrorFlag,
    FileCache,
    FlagBody,
    Meta,
    Occurrence,
    PackDictionary,
    Repo,
    SiteBody,
    Snapshot,
    SnapshotFlag,
    file_cache_key,
)
from errkb.core.packed import Trained, dictionary_of, is_known, register
from errkb.core.records import FlagDef, FlagLink, Site
from errkb.core.search.update import update_search_index
from errkb.ingest.flag_links.linker import error_flag_rows
from errkb.ingest.snapshot_rows import (
    BODY_COLUMNS,
    ERROR_FLAG_COLUMNS,
    FLAG_BODY_COLUMNS,
    OCCURRENCE_COLUMNS,
    SNAPSHOT_FLAG_COLUMNS,
    Prepared,
    error_row,
    flag_rows,
    prepare_site,
    site_rows,
)
from errkb.ingest.sources.base import SnapshotInfo

T = TypeVar("T")
BATCH = 500  # rows per statement and keys per IN (...) list: well under every bind limit


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _insert_ignore(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows, leaving any row whose primary key already exists untouched."""
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    keys = [c.name for c in table.primary_key.columns]
    stmt = dialect.insert(table).on_conflict_do_nothing(index_elements=keys)
    for chunk in batches(rows):
        conn.execute(stmt, list(chunk))


# A row written with any function-unit rows ("u:"/"n:" keys, see `ingest.extract.incremental`),
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
    with engine.begin() as conn:
        _insert_plain(
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
    with Session(engine) as session:
        kept = store_dictionary(session, purpose, trained)
        session.commit()
    return kept


def has_cached_units(engine: Engine, extractor: str) -> bool:
    """True when function-unit rows ("u:"/"n:" keys, see `ingest.extract.incremental`) exist."""
    return bool(load_cache(engine, extractor, [UNITS_PRESENT]))


def snapshot_exists(engine: Engine, repo_name: str, kind: str, commit: str) -> bool:
    """True when this (repo, kind, commit) snapshot is already complete in the database."""
    with engine.connect() as conn:
        return _snapshot_id(conn, repo_name, kind, commit) is not None


def _snapshot_id(conn: Connection, repo_name: str, kind: str, commit: str) -> int | None:
    return conn.execute(
        select(Snapshot.id)
        .join(Repo, Repo.id == Snapshot.repo_id)
        .where(Repo.name == repo_name, Snapshot.kind == kind, Snapshot.commit == commit)
    ).scalar()


def _repo_id(conn: Connection, fields: dict[str, Any]) -> int:
    """The repo row's id, created or refreshed from the pins."""
    row = conn.execute(select(Repo).where(Repo.name == fields["name"])).mappings().first()
    if row is None:
        return int(conn.execute(insert(Repo).values(**fields).returning(Repo.id)).scalar_one())
    changed = {k: v for k, v in fields.items() if row[k] != v}
    if changed:
        conn.execute(update(Repo).where(Repo.id == row["id"]).values(**changed))
    return int(row["id"])


def _bump_generation(conn: Connection) -> None:
    current = conn.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
    if current is None:
        conn.execute(insert(Meta).values(key="generation", value="1"))
    else:
        conn.execute(
            update(Meta).where(Meta.key == "generation").values(value=str(int(current) + 1))
        )


def _insert_plain(
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


def _insert_bodies(
    conn: Connection, table: Table, columns: Sequence[str], bodies: dict[str, tuple[Any, ...]]
) -> None:
    """Add the content-addressed rows (site or flag bodies, keyed by `hash`) not stored yet:
    most of a snapshot's are known from earlier ones, so their hashes are looked up first
    rather than their content sent again to be ignored."""
    wanted = sorted(bodies)
    known: set[str] = set()
    for chunk in batches(wanted):
        known.update(conn.execute(select(table.c.hash).where(table.c.hash.in_(chunk))).scalars())
    _insert_plain(
        conn,
        table,
        columns,
        [bodies[h] for h in wanted if h not in known],
        keep=("hash",),  # a concurrent ingest may have added it meanwhile
    )


def write_snapshot(
    engine: Engine,
    *,
    repo: dict[str, Any],
    info: SnapshotInfo,
    occurrences: Sequence[tuple[Site, list[FlagLink]]],
    flags: Sequence[FlagDef],
    counts: dict[str, Any],
    prepared: Sequence[Prepared] | None = None,
    before_commit: Callable[[], None] | None = None,
) -> tuple[int, int] | None:
    """Write one complete snapshot in one transaction; (errors, new errors), None if present.

    `prepared` holds each occurrence's `prepare_site`, when the caller worked it out already.
    """
    if prepared is None:
        prepared = [prepare_site(repo["name"], site) for site, _ in occurrences]
    with engine.begin() as conn:
        repo_id = _repo_id(conn, repo)
        if _snapshot_id(conn, repo["name"], info.kind, info.commit) is not None:
            return None
        ids = [p[0] for p in prepared]
        first: dict[str, Site] = {}
        for error, (site, _) in zip(ids, occurrences, strict=True):
            first.setdefault(error, site)
        # Every error id in one read (a scan of the primary-key index): repeated long IN lists
        # get a generic plan on PostgreSQL (psycopg prepares them) that compares every row with
        # every key.
        known = set(conn.execute(select(Error.id)).scalars().all())
        new_errors = [e for e in first if e not in known]
        snapshot_id = conn.execute(
            insert(Snapshot)
            .values(
                repo_id=repo_id,
                label=info.label,
                kind=info.kind,
                ref=info.ref,
                commit=info.commit,
                date=info.date,
                link_base=info.link_base,
                sort_key=info.sort_key,
                ingested_at=datetime.now(UTC),
                errors=len(first),
                **counts,
            )
            .returning(Snapshot.id)
        ).scalar_one()
        rows = [error_row(e, repo_id, first[e]) for e in new_errors]
        _insert_ignore(conn, Error.__table__, rows)  # type: ignore[arg-type]
        pairs = [
            site_rows(snapshot_id, site, prep, involved)
            for prep, (site, involved) in zip(prepared, occurrences, strict=True)
        ]
        _insert_bodies(
            conn,
            SiteBody.__table__,  # type: ignore[arg-type]
            BODY_COLUMNS,
            {body[0]: body for _, body in pairs},
        )
        _insert_plain(
            conn,
            Occurrence.__table__,  # type: ignore[arg-type]
            OCCURRENCE_COLUMNS,
            [occ for occ, _ in pairs],
        )
        links = {
            (error, link["dest"]): link["flag"]
            for error, (_, involved) in zip(ids, occurrences, strict=True)
            for link in error_flag_rows(error, snapshot_id, involved)
        }
        _insert_plain(
            conn,
            ErrorFlag.__table__,  # type: ignore[arg-type]
            ERROR_FLAG_COLUMNS,
            [(error, snapshot_id, dest, flag) for (error, dest), flag in links.items()],
        )
        flag_pairs = [flag_rows(snapshot_id, f) for f in flags]
        _insert_bodies(
            conn,
            FlagBody.__table__,  # type: ignore[arg-type]
            FLAG_BODY_COLUMNS,
            {body[0]: body for _, body in flag_pairs},
        )
        _insert_plain(
            conn,
            SnapshotFlag.__table__,  # type: ignore[arg-type]
            SNAPSHOT_FLAG_COLUMNS,
            [link for link, _ in flag_pairs],
        )
        # The full-text index follows in the same transaction, so search never sees a
        # snapshot half-indexed.
        update_search_index(
            conn,
            snapshot_id,
            [
                (error, site.path, site.qualname, [link.to_json() for link in involved])
                for error, (site, involved) in zip(ids, occurrences, strict=True)
            ],
            new_errors,
        )
        _bump_generation(conn)
        if before_commit is not None:
            before_commit()
    return len(first), len(new_errors)


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
