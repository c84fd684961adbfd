"""Reads what the matcher needs from the database: error rows and the ingest generation.

Only the columns the index uses are selected (never snippets or conditions), in four flat
queries joined in memory (the occurrences straight from the driver), so a full rebuild stays a
few seconds even for a whole history.
"""

from __future__ import annotations

from collections import defaultdict
from hashlib import blake2b
from pathlib import Path

from sqlalchemy import Engine, make_url, select
from sqlalchemy.orm import Session

from errkb.core.models import Error, Meta, Repo, Snapshot
from errkb.knowledge.who.evidence import in_test_code
from errkb.service.match.matcher.index import ErrorRow, MatchIndex, OccurrenceRow, build_index

# The engine type the live index holds; its module imports it from here, the matcher's queries.
DbEngine = Engine


def current_generation(session: Session) -> str:
    """The ingest generation (bumped by every completed snapshot); "" before any ingest."""
    value = session.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
    return value or ""


def database_identity(database_url: str) -> str:
    """The database's URL as one string per database: a SQLite file by its absolute path."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        url = url.set(database=str(Path(url.database).resolve()))
    return url.render_as_string(hide_password=False)


def content_key(session: Session) -> str:
    """What an index built in this transaction is built from, as a hex digest: the ingest
    generation and every snapshot's identity and ingest time. (The generation alone is a counter
    that a new database at the same place starts again; the snapshots tell the two apart.)"""
    digest = blake2b(current_generation(session).encode(), digest_size=16)
    snapshots = select(
        Snapshot.id,
        Snapshot.repo_id,
        Snapshot.label,
        Snapshot.commit,
        Snapshot.sort_key,
        Snapshot.ingested_at,
        Snapshot.sites,
        Snapshot.errors,
    ).order_by(Snapshot.id)
    for row in session.execute(snapshots):
        digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()


def content_key_now(engine: Engine) -> str:
    """The content key, read in its own short transaction."""
    with Session(engine) as session:
        return content_key(session)


def generation_now(engine: Engine) -> str:
    """The ingest generation, read in its own short transaction."""
    with Session(engine) as session:
        return current_generation(session)


def error_rows(session: Session) -> list[ErrorRow]:
    """Every error with its occurrences, in id order."""
    prefixes = dict(session.execute(select(Repo.id, Repo.path_prefix)).all())
    snapshots = {
        sid: (label, sort_key, prefixes.get(repo_id, "") or "")
        for sid, label, sort_key, repo_id in session.execute(
            select(Snapshot.id, Snapshot.label, Snapshot.sort_key, Snapshot.repo_id)
        )
    }
    occurrences: dict[str, list[OccurrenceRow]] = defaultdict(list)
    # Straight to the driver: over a whole history this is a hundred thousand rows, and the
    # ORM's per-row processing cost as much as the read itself.
    query = "SELECT error_id, path, line, end_line, qualname, snapshot_id FROM occurrences"
    rows = session.connection().exec_driver_sql(query).fetchall()  # one call, not one per row
    for error_id, path, line, end_line, qualname, sid in rows:
        label, sort_key, prefix = snapshots[sid]
        occurrences[error_id].append(
            OccurrenceRow(path, line, end_line, qualname, label, sort_key, prefix)
        )
    errors = select(
        Error.id, Error.title, Error.exception, Error.template, Error.kind, Error.check_text
    ).order_by(Error.id)
    return [
        ErrorRow(eid, title, exception, template, tuple(occurrences.get(eid, ())), kind, check)
        for eid, title, exception, template, kind, check in session.execute(errors)
    ]


def load_index(engine: Engine) -> MatchIndex:
    """Build a fresh index from the database (the generation is read in the same transaction)."""
    return keyed_index(engine)[0]


def keyed_index(engine: Engine) -> tuple[MatchIndex, str]:
    """A fresh index and its content key, both read in one transaction."""
    with Session(engine) as session, session.begin():
        generation = current_generation(session)
        key = content_key(session)
        rows = error_rows(session)
    return build_index(rows, generation=generation, test_path=in_test_code), key
