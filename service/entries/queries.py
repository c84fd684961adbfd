"""The entries domain's SQL: entry docs (and the reads that build an entry)."""

from __future__ import annotations

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from errkb.core.models import EntryDoc, Error, Occurrence


def entry_error_ids(session: Session) -> list[str]:
    """Every error that has an entry (at least one occurrence), in id order."""
    has_occurrence = select(Occurrence.id).where(Occurrence.error_id == Error.id).exists()
    return list(session.scalars(select(Error.id).where(has_occurrence).order_by(Error.id)))


def current_docs(session: Session, key: str, variant: str) -> int:
    """How many docs were built under `key` and `variant`."""
    return session.execute(
        select(func.count())
        .select_from(EntryDoc)
        .where(EntryDoc.content_key == key, EntryDoc.variant == variant)
    ).scalar_one()


def doc_body(session: Session, error_id: str, key: str, variant: str) -> bytes | None:
    """The compressed doc of an error, if it was built under `key` and `variant`."""
    return session.execute(
        select(EntryDoc.body).where(
            EntryDoc.error_id == error_id,
            EntryDoc.content_key == key,
            EntryDoc.variant == variant,
        )
    ).scalar()


def write_docs(session: Session, key: str, variant: str, rows: list[tuple[str, bytes]]) -> None:
    """Store docs (error id, compressed JSON) built under `key`, replacing older ones."""
    if not rows:
        return
    session.execute(delete(EntryDoc).where(EntryDoc.error_id.in_([i for i, _ in rows])))
    session.execute(
        EntryDoc.__table__.insert(),
        [{"error_id": i, "content_key": key, "variant": variant, "body": b} for i, b in rows],
    )


def rekey_docs(session: Session, old: str, new: str, changed: str) -> None:
    """Docs current under `old` stay current under `new`, except the changed error's."""
    session.execute(delete(EntryDoc).where(EntryDoc.error_id == changed))
    session.execute(update(EntryDoc).where(EntryDoc.content_key == old).values(content_key=new))
