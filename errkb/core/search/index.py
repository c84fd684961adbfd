"""Keeping the full-text index (`search_docs` + FTS5 / tsvector) in step with the ingested errors.

The tables come from the search-index migration and are not ORM models (their shape differs per
backend), so they are described here with SQLAlchemy Core. An error's document is its message,
plus its exception and the paths, functions and flag names of all its occurrences; `sort_key`
is its rank in one global order (message, then id). `refresh_search_index` rebuilds every
document; the ingest store keeps them in step snapshot by snapshot instead
(`errkb.core.search.update`), inside each snapshot's transaction, so the index and the errors it
points to become visible together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
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

from errkb.core.models import Error, Occurrence, SiteBody
from errkb.core.search.terms import document

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
# An occurrence as the index sees it: (error id, path, qualname, flag involvements).
OccurrenceTerms = tuple[str, str, str, list[dict[str, Any]] | None]
Places = tuple[set[str], set[str], set[str]]  # paths, functions, flag names of one error


def involved_flag_names(involvements: list[dict[str, Any]] | None) -> list[str]:
    """Primary flag names ("--tp-size") of an occurrence's stored flag involvements."""
    names = []
    for inv in involvements or []:
        dest = inv.get("dest")
        name = inv.get("flag") or ("--" + dest.replace("_", "-") if dest else "")
        if name:
            names.append(name)
    return names


def places_of(occurrences: Iterable[OccurrenceTerms]) -> dict[str, Places]:
    """Paths, functions and flag names of each error over these occurrences."""
    out: dict[str, Places] = defaultdict(lambda: (set(), set(), set()))
    for error_id, path, qualname, involvements in occurrences:
        paths, funcs, flags = out[error_id]
        paths.add(path)
        funcs.add(qualname)
        if involvements:
            flags.update(involved_flag_names(involvements))
    return out


def document_row(error_id: str, exception: str, message: str, places: Places) -> dict[str, Any]:
    """The indexed text of one error (all but its sort key)."""
    paths, funcs, flags = places
    names = sorted(flags)
    return {
        "error_id": error_id,
        "message_terms": document(message),
        "meta_terms": document(
            exception, " ".join(sorted(paths)), " ".join(sorted(funcs)), " ".join(names)
        ),
        "flag_key": "|" + "|".join(names) + "|",
    }


def order_key(message: str, error_id: str) -> tuple[str, str]:
    """The global order (message, then id), computed here so that both backends page
    identically without depending on their collations."""
    return message.casefold(), error_id


def refresh_search_index(session: Session | Connection) -> int:
    """Rebuild the search documents of every error in this transaction; returns the row count."""
    bind = session if isinstance(session, Connection) else session.get_bind()
    occ = select(Occurrence.error_id, Occurrence.path, Occurrence.qualname, SiteBody.flags).join(
        SiteBody, SiteBody.hash == Occurrence.body_hash
    )
    places = places_of(session.execute(occ))
    errors = sorted(
        session.execute(select(Error.id, Error.exception, Error.message)),
        key=lambda r: order_key(r.message, r.id),
    )
    empty: Places = (set(), set(), set())
    rows = [
        document_row(r.id, r.exception, r.message, places.get(r.id, empty)) | {"sort_key": i}
        for i, r in enumerate(errors)
    ]
    session.execute(delete(search_docs))
    if rows:
        session.execute(insert(search_docs), rows)
    if bind.dialect.name == "sqlite":
        session.execute(text("INSERT INTO search_fts(search_fts) VALUES ('rebuild')"))
    return len(rows)
