"""Trained compression dictionaries in the database: stored by their writers, loaded by readers.

A blob packed with a trained dictionary (`errkb.core.packed.Packer`) names the dictionary's id;
`unpack_stored` loads a dictionary the first time a blob of this process needs it (they never
change once stored, so a process keeps them). Both the ingester and the service use this.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from errkb.core.models import PackDictionary
from errkb.core.packed import Trained, UnknownDictionary, register, unpack


def unpack_stored(session: Session, blob: bytes) -> bytes | None:
    """The blob's bytes, loading its dictionary when needed; None when the dictionary is gone
    (a newer build replaced it: the blob is stale and its reader rebuilds it)."""
    try:
        return unpack(blob)
    except UnknownDictionary as missing:
        data = session.execute(
            select(PackDictionary.data).where(PackDictionary.id == missing.dict_id)
        ).scalar()
        if data is None:
            return None
        register(missing.dict_id, data)
        return unpack(blob)


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
