"""Keeping the full-text index (`search_docs` + FTS5 / tsvector) in step with the ingested errors.

The tables come from the search-index migration and are not ORM models (their shape differs per
backend), so they are described here with SQLAlchemy Core. The ingest store calls
`refresh_search_index` inside each snapshot's transaction, so the index and the errors it points
to become visible together.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    delete,
    insert,
    select,
    text,
)
from sqlalchemy.orm import Session

from errkb.models import Error, Occurrence
from service.search_terms import document

search_metadata = MetaData()
search_docs = Table(
    "search_docs",
    search_metadata,
    Column("id", Integer, primary_key=True),
    Column("error_id", String(16), nullable=False),
    Column("sort_key", Integer, nullable=False),
    Column("message_terms", Text, nullable=False),
    Column("meta_terms", Text, nullable=False),
    Column("flag_key", Text, nullable=False),
)


def involved_flag_names(involvements: list[dict[str, Any]] | None) -> list[str]:
    """Primary flag names ("--tp-size") of an occurrence's stored flag involvements."""
    names = []
    for inv in involvements or []:
        dest = inv.get("dest")
        name = inv.get("flag") or ("--" + dest.replace("_", "-") if dest else "")
        if name:
            names.append(name)
    return names


def refresh_search_index(session: Session | Connection) -> int:
    """Rebuild the search documents of every error in this transaction; returns the row count."""
    bind = session if isinstance(session, Connection) else session.get_bind()
    paths: dict[str, set[str]] = defaultdict(set)
    funcs: dict[str, set[str]] = defaultdict(set)
    flags: dict[str, set[str]] = defaultdict(set)
    occ = select(Occurrence.error_id, Occurrence.path, Occurrence.qualname, Occurrence.flags)
    for error_id, path, qualname, involvements in session.execute(occ):
        paths[error_id].add(path)
        funcs[error_id].add(qualname)
        flags[error_id].update(involved_flag_names(involvements))
    errors = list(session.execute(select(Error.id, Error.exception, Error.message)))
    # One global order (message, then id) computed here, so both backends page identically
    # without depending on their collations.
    errors.sort(key=lambda r: (r.message.casefold(), r.id))
    rows = [
        {
            "error_id": r.id,
            "sort_key": i,
            "message_terms": document(r.message),
            "meta_terms": document(
                r.exception,
                " ".join(sorted(paths[r.id])),
                " ".join(sorted(funcs[r.id])),
                " ".join(sorted(flags[r.id])),
            ),
            "flag_key": "|" + "|".join(sorted(flags[r.id])) + "|",
        }
        for i, r in enumerate(errors)
    ]
    session.execute(delete(search_docs))
    if rows:
        session.execute(insert(search_docs), rows)
    if bind.dialect.name == "sqlite":
        session.execute(text("INSERT INTO search_fts(search_fts) VALUES ('rebuild')"))
    return len(rows)
