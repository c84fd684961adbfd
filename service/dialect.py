"""The one place where SQLite and PostgreSQL differ in the service's SQL.

Full-text matching is FTS5 on SQLite and a GIN-indexed tsvector on PostgreSQL, both over text
that `errkb.core.search.terms` pre-tokenized, so a query means the same on either; substring
position is `instr` on one and `strpos` on the other; related errors rank message matches by
BM25 (FTS5's rank) or `ts_rank`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    column,
    func,
    literal,
    literal_column,
    select,
    table,
    text,
)
from sqlalchemy.orm import Session

from errkb.core.search.index import search_docs
from errkb.core.search.terms import Phrase, fts5_query, tsquery

_fts = table("search_fts", column("rowid", Integer), column("search_fts"))


def is_postgres(session: Session) -> bool:
    """True on PostgreSQL, False on SQLite."""
    return session.get_bind().dialect.name == "postgresql"


def fulltext_match(
    session: Session, phrases: tuple[Phrase, ...], *, message_only: bool
) -> ColumnElement[bool]:
    """The backend's full-text predicate on `search_docs` rows (all phrases must match)."""
    if is_postgres(session):
        query = tsquery(phrases, weight="A" if message_only else "")
        ts = func.to_tsquery(literal_column("'simple'::regconfig"), literal(query))
        return literal_column("search_docs.tsv").op("@@")(ts)
    expr = fts5_query(phrases, "message_terms" if message_only else None)
    rowids = select(_fts.c.rowid).where(_fts.c.search_fts.op("MATCH")(literal(expr)))
    return search_docs.c.id.in_(rowids)


def contains(session: Session, haystack: ColumnElement[Any], needle: str) -> ColumnElement[bool]:
    """`needle` occurs in `haystack` (case-sensitive, no wildcards)."""
    position = func.strpos if is_postgres(session) else func.instr
    return position(haystack, needle) > 0


def message_matches(session: Session, pairs: list[tuple[str, ...]], limit: int) -> list[str]:
    """Ids of the errors whose messages hold all words of any of `pairs` (indexed terms), best
    match first (then by sort key), at most `limit`."""
    if is_postgres(session):
        q = " | ".join("(" + " & ".join(f"{w}:A" for w in pair) + ")" for pair in pairs)
        sql = text(
            "SELECT error_id FROM search_docs WHERE tsv @@ to_tsquery('simple', :q) "
            "ORDER BY ts_rank(tsv, to_tsquery('simple', :q)) DESC, sort_key LIMIT :n"
        )
    else:
        q = (
            "{message_terms} : ("
            + " OR ".join("(" + " AND ".join(f'"{w}"' for w in pair) + ")" for pair in pairs)
            + ")"
        )
        sql = text(
            "SELECT d.error_id FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid "
            "WHERE search_fts MATCH :q ORDER BY search_fts.rank, d.sort_key LIMIT :n"
        )
    return [r[0] for r in session.execute(sql, {"q": q, "n": limit})]
