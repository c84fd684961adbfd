"""Writing one complete snapshot in ONE transaction: the repo and snapshot rows, the new errors,
the sites (bodies and occurrences), the flags, the search index and the generation bump, so
readers see either the whole snapshot or nothing, and a killed ingest leaves the previous state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update

from errkb.core.declared import declared_to_json
from errkb.core.models import (
    Error,
    ErrorFlag,
    FlagBody,
    Meta,
    Occurrence,
    Repo,
    SiteBody,
    Snapshot,
    SnapshotFlag,
)
from errkb.core.records import FlagDef, FlagLink, Site
from errkb.core.search.update import update_search_index
from errkb.ingest.flag_links.linker import error_flag_rows
from errkb.ingest.inserts import insert_bodies, insert_ignore, insert_plain
from errkb.ingest.snapshot_rows import (
    BODY_COLUMNS,
    ERROR_FLAG_COLUMNS,
    FLAG_BODY_COLUMNS,
    OCCURRENCE_COLUMNS,
    SNAPSHOT_FLAG_COLUMNS,
    Prepared,
    error_row,
    flag_rows,
    packed_body,
    prepare_site,
    site_rows,
)
from errkb.ingest.sources.base import SnapshotInfo

Linked = Sequence[tuple[Site, list[FlagLink]]]


def snapshot_id(conn: Connection, repo_name: str, kind: str, commit: str) -> int | None:
    """The id of the complete (repo, kind, commit) snapshot, None when it is not stored."""
    return conn.execute(
        select(Snapshot.id)
        .join(Repo, Repo.id == Snapshot.repo_id)
        .where(Repo.name == repo_name, Snapshot.kind == kind, Snapshot.commit == commit)
    ).scalar()


def write_snapshot(
    engine: Engine,
    *,
    repo: dict[str, Any],
    info: SnapshotInfo,
    occurrences: Linked,
    flags: Sequence[FlagDef],
    counts: dict[str, Any],
    prepared: Sequence[Prepared] | None = None,
    before_commit: Callable[[], None] | None = None,
    chains: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[int, int] | None:
    """Write one complete snapshot in one transaction; (errors, new errors), None if present.

    `prepared` holds each occurrence's `prepare_site`, when the caller worked it out already;
    `chains` the class chain of each raised class (`ingest.hierarchy`).
    """
    if prepared is None:
        prepared = [prepare_site(repo["name"], site) for site, _ in occurrences]
    with engine.begin() as conn:
        repo_id = _repo_id(conn, repo)
        if snapshot_id(conn, repo["name"], info.kind, info.commit) is not None:
            return None
        ids = [p[0] for p in prepared]
        first: dict[str, Site] = {}
        for error, (site, _) in zip(ids, occurrences, strict=True):
            first.setdefault(error, site)
        snapshot = _snapshot_row(conn, repo_id, info, len(first), counts)
        new_errors = _write_errors(conn, repo_id, first, chains or {})
        _write_sites(conn, snapshot, ids, prepared, occurrences)
        _write_flags(conn, snapshot, flags)
        # The full-text index follows in the same transaction, so search never sees a
        # snapshot half-indexed.
        update_search_index(
            conn,
            snapshot,
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


def _snapshot_row(
    conn: Connection, repo_id: int, info: SnapshotInfo, errors: int, counts: dict[str, Any]
) -> int:
    """Insert the snapshot row; its id."""
    return int(
        conn.execute(
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
                requirements=declared_to_json(info.requirements),
                ingested_at=datetime.now(UTC),
                errors=errors,
                **counts,
            )
            .returning(Snapshot.id)
        ).scalar_one()
    )


def _write_errors(
    conn: Connection,
    repo_id: int,
    first: dict[str, Site],
    chains: Mapping[str, tuple[str, ...]],
) -> list[str]:
    """Insert the errors not stored yet (from each one's first site); their ids."""
    # Every error id in one read (a scan of the primary-key index): repeated long IN lists
    # get a generic plan on PostgreSQL (psycopg prepares them) that compares every row with
    # every key.
    known = set(conn.execute(select(Error.id)).scalars().all())
    new_errors = [e for e in first if e not in known]
    rows = [error_row(e, repo_id, first[e], chains.get(first[e].exception)) for e in new_errors]
    insert_ignore(conn, Error.__table__, rows)  # type: ignore[arg-type]
    return new_errors


def _write_sites(
    conn: Connection,
    snapshot: int,
    ids: list[str],
    prepared: Sequence[Prepared],
    occurrences: Linked,
) -> None:
    """The site bodies not stored yet, the occurrences, and which errors involve which flag."""
    pairs = [
        site_rows(snapshot, site, prep, involved)
        for prep, (site, involved) in zip(prepared, occurrences, strict=True)
    ]
    insert_bodies(
        conn,
        SiteBody.__table__,  # type: ignore[arg-type]
        BODY_COLUMNS,
        {body[0]: body for _, body in pairs},
        finish=packed_body,
    )
    insert_plain(
        conn,
        Occurrence.__table__,  # type: ignore[arg-type]
        OCCURRENCE_COLUMNS,
        [occ for occ, _ in pairs],
    )
    links = {
        (error, link["dest"]): link["flag"]
        for error, (_, involved) in zip(ids, occurrences, strict=True)
        for link in error_flag_rows(error, snapshot, involved)
    }
    insert_plain(
        conn,
        ErrorFlag.__table__,  # type: ignore[arg-type]
        ERROR_FLAG_COLUMNS,
        [(error, snapshot, dest, flag) for (error, dest), flag in links.items()],
    )


def _write_flags(conn: Connection, snapshot: int, flags: Sequence[FlagDef]) -> None:
    """The flag bodies not stored yet, and the snapshot's flags."""
    flag_pairs = [flag_rows(snapshot, f) for f in flags]
    insert_bodies(
        conn,
        FlagBody.__table__,  # type: ignore[arg-type]
        FLAG_BODY_COLUMNS,
        {body[0]: body for _, body in flag_pairs},
    )
    insert_plain(
        conn,
        SnapshotFlag.__table__,  # type: ignore[arg-type]
        SNAPSHOT_FLAG_COLUMNS,
        [link for link, _ in flag_pairs],
    )


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
