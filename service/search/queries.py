"""The one search service behind `/` (HTML), `GET /api/errors` (JSON) and the browse pages.

Matching uses the database's own full-text index (FTS5 on SQLite, a GIN-indexed tsvector on
PostgreSQL) over text pre-tokenized by `errkb.core.search.terms`. Results are ordered by
relevance tier (the query as an exact phrase in the message, then every phrase in the message,
then paths or flags only) and within a tier by a key the index refresh computed once, not by a
backend score, so SQLite and PostgreSQL return the same hits in the same order and cursors mean
the same thing.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from sqlalchemy import ColumnElement, Text, case, cast, exists, func, literal, select
from sqlalchemy.orm import Session

from errkb.core.errors import BadInput
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.core.search.index import search_docs
from errkb.core.search.terms import Phrase, parse_query
from errkb.service.dialect import contains, fulltext_match
from errkb.service.search.schemas import SearchHit, SearchResults

MAX_LIMIT = 100
# Relevance tiers, best first: the query's words as one phrase in the message, every phrase in
# the message, a match in paths or flags only. Within a tier the order is the index's sort key.
EXACT, IN_MESSAGE, ELSEWHERE = 0, 1, 2


def as_one_phrase(phrases: tuple[Phrase, ...]) -> Phrase:
    """The query's words, in order, as one phrase (its exact form)."""
    return Phrase(tuple(w for p in phrases for w in p.words), phrases[-1].prefix)


def normalize_flag(flag: str) -> str:
    """`enable-unified-memory` or `--enable-unified-memory` -> `--enable-unified-memory`."""
    flag = flag.strip()
    return flag if flag.startswith("-") else "--" + flag


# A cursor is "tier:sort_key", as the OpenAPI document declares it (a pattern a client, or a
# schema-driven tester, can check); sort keys are ranks, far below the 32-bit INTEGER limit.
CURSOR_PATTERN = r"^[0-2]:[0-9]{1,9}$"


def _encode_cursor(tier: int, sort_key: int) -> str:
    return f"{tier}:{sort_key}"


def _decode_cursor(cursor: str) -> tuple[int, int]:
    """(tier, sort_key) of a cursor this module made; anything else, forged or stale, is
    refused here, before a number too large for the database's integers reaches a query."""
    if re.fullmatch(CURSOR_PATTERN, cursor) is None:
        raise BadInput("invalid cursor", loc=("query", "cursor"))
    tier, key = cursor.split(":")
    return int(tier), int(key)


def class_filter(session: Session, error_id: Any, exception: str) -> ColumnElement[bool]:
    """The error raises `exception` or a class derived from it (its stored chain names it)."""
    in_chain = contains(session, cast(Error.chain, Text), json.dumps(exception))
    return exists(
        select(literal(1))
        .select_from(Error)
        .where(Error.id == error_id, (Error.exception == exception) | in_chain)
    )


def _filters(
    session: Session,
    snapshot: str | None,
    path: str | None,
    flag: str | None,
    exception: str | None = None,
) -> list[ColumnElement[bool]]:
    d = search_docs
    out: list[ColumnElement[bool]] = []
    if exception:
        out.append(class_filter(session, d.c.error_id, exception.strip()))
    if snapshot or path:
        occ = select(literal(1)).select_from(Occurrence).where(Occurrence.error_id == d.c.error_id)
        if snapshot:
            occ = occ.join(Snapshot, Snapshot.id == Occurrence.snapshot_id).where(
                Snapshot.label == snapshot
            )
        if path:
            # substr instead of LIKE: no wildcard escaping, and case-sensitive on both backends.
            occ = occ.where(func.substr(Occurrence.path, 1, len(path)) == path)
        out.append(exists(occ))
    if flag:
        needle = "|" + normalize_flag(flag) + "|"
        out.append(contains(session, d.c.flag_key, needle))
    return out


def search_errors(
    session: Session,
    *,
    q: str = "",
    snapshot: str | None = None,
    path: str | None = None,
    flag: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
    exception: str | None = None,
) -> SearchResults:
    """Errors matching `q` (all words, each chunk a phrase) and the filters, one page at a time."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"limit must be between 1 and {MAX_LIMIT}")
    d = search_docs
    phrases = parse_query(q)
    where = _filters(session, snapshot or None, path or None, flag or None, exception or None)
    tier: ColumnElement[Any] = literal(0)
    if phrases:
        where.append(fulltext_match(session, phrases, message_only=False))
        tier = case(
            (fulltext_match(session, (as_one_phrase(phrases),), message_only=True), EXACT),
            (fulltext_match(session, phrases, message_only=True), IN_MESSAGE),
            else_=ELSEWHERE,
        )
    inner = select(d.c.error_id, d.c.sort_key, tier.label("tier")).where(*where).subquery("hits")
    total = session.execute(select(func.count()).select_from(inner)).scalar_one()
    page = select(inner.c.error_id, inner.c.tier, inner.c.sort_key)
    if cursor:
        t, k = _decode_cursor(cursor)
        page = page.where((inner.c.tier > t) | ((inner.c.tier == t) & (inner.c.sort_key > k)))
    rows = session.execute(page.order_by(inner.c.tier, inner.c.sort_key).limit(limit + 1)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    items = hits_for(session, [(r.error_id, r.tier < ELSEWHERE and bool(phrases)) for r in rows])
    return SearchResults(
        q=q,
        snapshot=snapshot or None,
        path=path or None,
        flag=flag or None,
        exception=exception or None,
        total=total,
        limit=limit,
        items=items,
        next_cursor=_encode_cursor(rows[-1].tier, rows[-1].sort_key) if more else None,
    )


def hits_for(session: Session, ids: list[tuple[str, bool]]) -> list[SearchHit]:
    """Hydrate (error id, matched in message) pairs with their message and where they occur."""
    if not ids:
        return []
    keys = [i for i, _ in ids]
    errors = {e.id: e for e in session.scalars(select(Error).where(Error.id.in_(keys)))}
    seen: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)  # id -> label -> (key, site)
    occ = (
        select(
            Occurrence.error_id, Occurrence.path, Occurrence.line, Snapshot.label, Snapshot.sort_key
        )
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .where(Occurrence.error_id.in_(keys))
        .order_by(Occurrence.path, Occurrence.line)
    )
    for error_id, path, line, label, skey in session.execute(occ):
        seen[error_id].setdefault(label, (skey, f"{path}:{line}"))
    hits = []
    for error_id, in_message in ids:
        e = errors[error_id]
        by_snap = sorted(seen[error_id].items(), key=lambda kv: (kv[1][0], kv[0]))
        hits.append(
            SearchHit(
                id=e.id,
                title=e.title,
                exception=e.exception,
                message=e.message,
                url=f"/errors/{e.id}",
                in_message=in_message,
                snapshots=[label for label, _ in by_snap],
                where=by_snap[-1][1][1] if by_snap else None,
            )
        )
    return hits
