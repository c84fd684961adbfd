"""The store: the only part of the ingester that uses SQLAlchemy.

A snapshot is written in ONE transaction (repo row, snapshot row, new errors, occurrences, flags
and the generation bump), so readers see either the whole snapshot or nothing, and a killed
ingest leaves the previous complete state. The file cache is written separately: its rows are
content-addressed and idempotent, so committing them early loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, Table, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from errkb.models import Error, ErrorFlag, FileCache, Flag, Meta, Occurrence, Repo, Snapshot
from ingest.links import error_flag_rows
from ingest.records import FlagDef, Site, error_id
from ingest.sources.base import SnapshotInfo
from service.search_index import refresh_search_index

T = TypeVar("T")
BATCH = 500  # rows per statement and keys per IN (...) list: well under every bind limit
TITLE_CHARS = 120


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def title_of(message: str, exception: str) -> str:
    """A short first-sentence form of a message, for lists and page titles."""
    text = " ".join(message.split())
    if not text:
        return f"{exception} raised without a message"
    end = text.find(". ")
    if 0 < end:
        text = text[: end + 1]
    if len(text) > TITLE_CHARS:
        cut = text.rfind(" ", 0, TITLE_CHARS)
        text = text[: cut if cut > TITLE_CHARS // 2 else TITLE_CHARS].rstrip(" ,;:") + "…"
    return text


_FIELDS: dict[type, tuple[str, ...]] = {}


def _shallow(record: Any) -> dict[str, Any]:
    """A flat record (no nested dataclasses) as a JSON-ready dict; much faster than asdict."""
    names = _FIELDS.get(type(record))
    if names is None:
        names = _FIELDS[type(record)] = tuple(f.name for f in fields(record))
    return {name: getattr(record, name) for name in names}


def _insert_ignore(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert rows, leaving any row whose primary key already exists untouched."""
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    keys = [c.name for c in table.primary_key.columns]
    stmt = dialect.insert(table).on_conflict_do_nothing(index_elements=keys)
    for chunk in batches(rows):
        conn.execute(stmt, list(chunk))


def load_cache(engine: Engine, extractor: str, hashes: Iterable[str]) -> dict[str, bytes]:
    """Cached results (compressed) for the given content hashes under this extractor key."""
    wanted = sorted(set(hashes))
    found: dict[str, bytes] = {}
    table = FileCache.__table__
    with engine.connect() as conn:
        for chunk in batches(wanted):
            rows = conn.execute(
                select(table.c.content_hash, table.c.result).where(
                    table.c.extractor == extractor, table.c.content_hash.in_(chunk)
                )
            )
            found.update({h: bytes(blob) for h, blob in rows})
    return found


def write_cache(engine: Engine, extractor: str, blobs: dict[str, bytes]) -> None:
    """Store per-file results; idempotent, committed on its own."""
    rows = [{"content_hash": h, "extractor": extractor, "result": b} for h, b in blobs.items()]
    with engine.begin() as conn:
        _insert_ignore(conn, FileCache.__table__, rows)  # type: ignore[arg-type]


def has_cached_units(engine: Engine, extractor: str) -> bool:
    """True when function-unit rows ("u:"/"n:" keys, see `ingest.extract.incremental`) exist."""
    table = FileCache.__table__
    with engine.connect() as conn:
        found = conn.execute(
            select(table.c.content_hash)
            .where(table.c.extractor == extractor, table.c.content_hash.like("_:%"))
            .limit(1)
        ).first()
    return found is not None


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


def _error_row(repo_name: str, repo_id: int, site: Site) -> dict[str, Any]:
    message = site.template.display
    return {
        "id": error_id(repo_name, site.exception, site.template),
        "repo_id": repo_id,
        "exception": site.exception,
        "template": [_shallow(s) for s in site.template.segments],
        "form": site.template.form,
        "message": message,
        "title": title_of(message, site.exception),
    }


def _flag_row(snapshot_id: int, flag: FlagDef) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot_id,
        "name": flag.flags[0] if flag.flags else "--" + flag.dest.replace("_", "-"),
        "flags": list(flag.flags),
        "dest": flag.dest,
        "type": flag.type,
        "default": flag.default,
        "choices": list(flag.choices) if flag.choices is not None else None,
        "help": flag.help,
        "path": flag.path,
        "line": flag.line,
        "origin": flag.origin,
    }


def _bump_generation(conn: Connection) -> None:
    current = conn.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
    if current is None:
        conn.execute(insert(Meta).values(key="generation", value="1"))
    else:
        conn.execute(
            update(Meta).where(Meta.key == "generation").values(value=str(int(current) + 1))
        )


def write_snapshot(
    engine: Engine,
    *,
    repo: dict[str, Any],
    info: SnapshotInfo,
    occurrences: Sequence[tuple[Site, list[dict[str, Any]]]],
    flags: Sequence[FlagDef],
    counts: dict[str, Any],
    before_commit: Callable[[], None] | None = None,
) -> tuple[int, int] | None:
    """Write one complete snapshot in one transaction; (errors, new errors), None if present."""
    with engine.begin() as conn:
        repo_id = _repo_id(conn, repo)
        if _snapshot_id(conn, repo["name"], info.kind, info.commit) is not None:
            return None
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
                **counts,
            )
            .returning(Snapshot.id)
        ).scalar_one()

        errors: dict[str, dict[str, Any]] = {}
        for site, _ in occurrences:
            row = _error_row(repo["name"], repo_id, site)
            errors.setdefault(row["id"], row)
        existing: set[str] = set()
        for ids in batches(sorted(errors)):
            existing.update(conn.execute(select(Error.id).where(Error.id.in_(ids))).scalars())
        new_errors = [r for i, r in errors.items() if i not in existing]
        _insert_ignore(conn, Error.__table__, new_errors)  # type: ignore[arg-type]

        occ_rows: list[dict[str, Any]] = [
            {
                "error_id": error_id(repo["name"], site.exception, site.template),
                "snapshot_id": snapshot_id,
                "path": site.path,
                "line": site.line,
                "end_line": site.end_line,
                "qualname": site.qualname,
                "conditions": [_shallow(c) for c in site.conditions],
                "snippet": _shallow(site.snippet),
                "flags": involved,
                "raise_source": site.raise_source,
            }
            for site, involved in occurrences
        ]
        for rows in batches(occ_rows):
            conn.execute(insert(Occurrence), list(rows))
        links = {
            (r["error_id"], r["dest"]): r
            for o in occ_rows
            for r in error_flag_rows(o["error_id"], snapshot_id, o["flags"])
        }
        for chunk in batches(list(links.values())):
            conn.execute(insert(ErrorFlag), list(chunk))
        flag_rows = [_flag_row(snapshot_id, f) for f in flags]
        for chunk in batches(flag_rows):
            conn.execute(insert(Flag), list(chunk))
        conn.execute(update(Snapshot).where(Snapshot.id == snapshot_id).values(errors=len(errors)))
        # The full-text index is rebuilt in the same transaction, so search never sees a
        # snapshot half-indexed.
        refresh_search_index(conn)
        _bump_generation(conn)
        if before_commit is not None:
            before_commit()
    return len(errors), len(errors) - len(existing)
