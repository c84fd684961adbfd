"""The SQL of incremental entry docs: the rows a doc's inputs hash is made of, and doc states.

`inputs.py` hashes what these return; `plan.py` compares the hashes with the stored ones.
The reads for every error at once stream ordered rows, so a knowledge base of a few hundred
thousand occurrences is hashed in one pass without holding ORM objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, cast, delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from errkb.core.cache_models import EntryDoc, Meta, PackDictionary
from errkb.core.models import Error, Occurrence, Repo, Snapshot
from errkb.core.packed import Trained

ERROR_COLUMNS = (
    Error.id,
    Error.repo_id,
    Error.message,
    Error.title,
    Error.exception,
    Error.form,
    cast(Error.template, Text).label("template"),  # compared, never read: no JSON decoding
)
OCCURRENCE_COLUMNS = (
    Occurrence.error_id,
    Occurrence.snapshot_id,
    Occurrence.path,
    Occurrence.line,
    Occurrence.end_line,
    Occurrence.qualname,
    Occurrence.body_hash,
)
SNAPSHOT_COLUMNS = (
    Snapshot.id,
    Snapshot.repo_id,
    Snapshot.label,
    Snapshot.kind,
    Snapshot.commit,
    Snapshot.date,
    Snapshot.link_base,
)
REPO_COLUMNS = (
    Repo.id,
    Repo.name,
    Repo.web_url,
    Repo.pypi_name,
    Repo.launch_command,
    Repo.vocabulary,
)


@dataclass(frozen=True)
class StoredDoc:
    """What a build needs to know of a stored doc (not its body)."""

    content_key: str
    variant: str
    inputs: str | None
    related: str | None
    stable: str | None


def error_rows(session: Session, error_id: str | None = None) -> list[Any]:
    """The error rows (of one error, or of all), with the fields an entry shows."""
    q = select(*ERROR_COLUMNS)
    if error_id is not None:
        q = q.where(Error.id == error_id)
    return list(session.connection().execute(q).all())  # Core rows: no ORM loading per row


def occurrence_rows_by_error(session: Session, error_id: str | None = None) -> Iterator[Any]:
    """Occurrences (of one error, or of all) ordered by error, then place and snapshot."""
    q = select(*OCCURRENCE_COLUMNS)
    if error_id is not None:
        q = q.where(Occurrence.error_id == error_id)
    q = q.order_by(
        Occurrence.error_id, Occurrence.path, Occurrence.line, Occurrence.snapshot_id
    ).execution_options(yield_per=5000)
    yield from session.connection().execute(q)


def snapshots_by_repo(session: Session) -> dict[int, list[Any]]:
    """Every repo's snapshots, in the version order entries use."""
    out: dict[int, list[Any]] = {}
    q = select(*SNAPSHOT_COLUMNS).order_by(Snapshot.repo_id, Snapshot.sort_key, Snapshot.id)
    for row in session.connection().execute(q):
        out.setdefault(row.repo_id, []).append(row)
    return out


def repo_rows(session: Session) -> dict[int, Any]:
    """Every repo's fields that shape its entries."""
    return {r.id: r for r in session.execute(select(*REPO_COLUMNS))}


def error_titles(session: Session, ids: set[str] | None = None) -> dict[str, str]:
    """Title per error id (of `ids`, or of every error)."""
    q = select(Error.id, Error.title)
    if ids is not None:
        if not ids:
            return {}
        q = q.where(Error.id.in_(sorted(ids)))
    return {i: t for i, t in session.connection().execute(q)}


def stored_docs(session: Session) -> dict[str, StoredDoc]:
    """The state of every stored doc, by error id."""
    q = select(
        EntryDoc.error_id,
        EntryDoc.content_key,
        EntryDoc.variant,
        EntryDoc.inputs,
        EntryDoc.related,
        EntryDoc.stable,
    )
    return {r[0]: StoredDoc(*r[1:]) for r in session.connection().execute(q)}


def doc_count(session: Session, key: str, variant: str) -> int:
    """How many stored docs are current under content key `key` and settings `variant`."""
    q = select(func.count()).where(EntryDoc.content_key == key, EntryDoc.variant == variant)
    return int(session.scalar(q) or 0)


DocRow = tuple[str, bytes, str, str, str]  # error id, packed JSON, inputs, stable inputs, related


def write_built_docs(session: Session, key: str, variant: str, rows: list[DocRow]) -> None:
    """Store docs (error id, packed JSON, inputs hashes, related ids) built under `key`."""
    if not rows:
        return
    session.execute(delete(EntryDoc).where(EntryDoc.error_id.in_([r[0] for r in rows])))
    session.execute(
        insert(EntryDoc),
        [
            {
                "error_id": i,
                "content_key": key,
                "variant": variant,
                "body": b,
                "inputs": h,
                "stable": st,
                "related": r,
            }
            for i, b, h, st, r in rows
        ],
    )


def rekey_current(session: Session, ids: list[str], key: str) -> None:
    """Docs whose inputs held are current under `key` too (rows already under it are left)."""
    for start in range(0, len(ids), 1000):
        part = ids[start : start + 1000]
        session.execute(
            update(EntryDoc)
            .where(EntryDoc.error_id.in_(part), EntryDoc.content_key != key)
            .values(content_key=key)
        )


def set_stable(session: Session, hashes: dict[str, str]) -> None:
    """Store the stable inputs hash of kept docs (those built before it was stored)."""
    if hashes:  # an ORM bulk UPDATE by primary key: one executemany
        session.execute(update(EntryDoc), [{"error_id": i, "stable": h} for i, h in hashes.items()])


def forget_inputs(session: Session, ids: list[str]) -> None:
    """Docs that must be built again before they are served, whatever a later plan finds."""
    for start in range(0, len(ids), 1000):
        part = ids[start : start + 1000]
        session.execute(update(EntryDoc).where(EntryDoc.error_id.in_(part)).values(inputs=None))


def drop_docs_of(session: Session, ids: list[str]) -> None:
    """Delete the docs of these errors (they have no entry any more)."""
    for start in range(0, len(ids), 1000):
        session.execute(delete(EntryDoc).where(EntryDoc.error_id.in_(ids[start : start + 1000])))


def max_snapshot_id(session: Session) -> int:
    """The newest snapshot's id (0 when there is none): ids only grow with each ingest."""
    return int(session.execute(select(func.max(Snapshot.id))).scalar() or 0)


def meta_value(session: Session, key: str) -> str | None:
    """A `meta` row's value."""
    return session.execute(select(Meta.value).where(Meta.key == key)).scalar()


def set_meta(session: Session, key: str, value: str) -> None:
    """Write a `meta` row (in the caller's transaction)."""
    if session.get(Meta, key) is None:
        session.add(Meta(key=key, value=value))
    else:
        session.execute(update(Meta).where(Meta.key == key).values(value=value))


def newest_dictionary(session: Session, purpose: str) -> Trained | None:
    """A stored dictionary of `purpose` (normally the only one), to pack new docs with."""
    row = session.execute(
        select(PackDictionary)
        .where(PackDictionary.purpose == purpose)
        .order_by(PackDictionary.samples.desc(), PackDictionary.id)
    ).scalar()
    return Trained(row.id, row.data, row.samples) if row is not None else None


def try_write_doc(session: Session, key: str, variant: str, row: DocRow) -> str | None:
    """Store one doc built on demand and commit; why not, if the database refused (SQLite
    busy with an ingest, a read-only user): the doc is then built again when next needed."""
    try:
        write_built_docs(session, key, variant, [row])
        session.commit()
    except DBAPIError as exc:
        session.rollback()
        return str(exc.orig)
    return None
