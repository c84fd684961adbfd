"""A marker planted in one stored entry doc: a response that shows it was read from that doc."""

from __future__ import annotations

import json

from sqlalchemy import select, update

from errkb.core import packed
from errkb.core.db import make_engine
from errkb.core.models import EntryDoc

MARKER = "A title no build produces"


def plant_marker(url: str, error_id: str, **values: str) -> None:
    """Give one doc a marker title (and other `values`): served only if the doc is read."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            stored = conn.execute(
                select(EntryDoc.body).where(EntryDoc.error_id == error_id)
            ).scalar_one()
            entry = {**json.loads(packed.unpack(stored)), "title": MARKER}
            body = packed.Packer(None).pack(json.dumps(entry).encode())
            where = EntryDoc.error_id == error_id
            conn.execute(update(EntryDoc).where(where).values(body=body, **values))
    finally:
        engine.dispose()
