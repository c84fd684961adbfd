"""Trained compression dictionaries in the database: stored by their writers, loaded by readers.

A blob packed with a trained dictionary (`errkb.core.packed.Packer`) names the dictionary's id;
`unpack_stored` loads a dictionary the first time a blob of this process needs it (they never
change once stored, so a process keeps them). Both the ingester and the service use this.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from errkb.core.models import PackDictionary
from errkb.core.packed import Trained, dictionary_of, is_known, register, unpack


def load_missing(session: Session, blobs: Iterable[bytes]) -> None:
    """Register the stored dictionaries these blobs need and this process lacks (those not in
    the database stay unknown: `is_known` tells)."""
    _register(session, {d for d in map(dictionary_of, blobs) if not is_known(d)})


def load_all(session: Session) -> int:
    """Register every stored dictionary this process lacks (a server does so as it starts, so
    its first reads of stored docs need no session); how many were registered."""
    stored = session.scalars(select(PackDictionary.id))
    return _register(session, {d for d in stored if not is_known(d)})


def _register(session: Session, missing: set[int]) -> int:
    """Register the stored dictionaries among `missing`; how many there were."""
    if not missing:
        return 0
    rows = session.execute(select(PackDictionary).where(PackDictionary.id.in_(missing)))
    found = 0
    for row in rows.scalars():
        register(row.id, row.data)
        found += 1
    return found


def unpack_stored(session: Session, blob: bytes) -> bytes | None:
    """The blob's bytes, loading its dictionary when needed; None when the dictionary is gone
    (a newer build replaced it: the blob is stale and its reader rebuilds it)."""
    load_missing(session, [blob])
    return unpack(blob) if is_known(dictionary_of(blob)) else None


def store_dictionary(session: Session, purpose: str, trained: Trained) -> bool:
    """Keep a freshly trained dictionary; False when its id is already taken by another one
    (ids are 32-bit: the caller then packs without it)."""
    existing = session.get(PackDictionary, trained.id)
    if existing is not None:
        return existing.data == trained.data
    session.add(
        PackDictionary(id=trained.id, purpose=purpose, samples=trained.samples, data=trained.data)
    )
    session.flush()
    register(trained.id, trained.data)
    return True


def drop_dictionaries_except(session: Session, purpose: str, keep: int) -> int:
    """Delete the dictionaries of `purpose` other than `keep`; how many were deleted."""
    result = session.execute(
        delete(PackDictionary).where(PackDictionary.purpose == purpose, PackDictionary.id != keep)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
