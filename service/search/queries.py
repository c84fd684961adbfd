"""The one search service behind `/` (HTML), `GET /api/errors` (JSON) and the browse pages.

Matching uses the database's own full-text index (FTS5 on SQLite, a GIN-indexed tsvector on
PostgreSQL) over text pre-tokenized by `errkb.core.search.terms`. Results are ordered by
relevance tier (the query as an exact phrase in the message, then every phrase in the message,
then paths or flags only), and within a tier by how well each error matches, server code before
the project's own tests and newer releases first (`ranking`), all computed from stored text, not
by a backend score: SQLite and PostgreSQL return the same hits in the same order, and a cursor
(the position of the last hit shown) means the same thing on both.

A flag filter takes any of the flag's names (`--tp`, `tp-size`, `tp_size`: its aliases and
settings field, as the ingested versions define them); a flag or class no ingested version
knows is said to be unknown (`SearchResults.notes`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from sqlalchemy import ColumnElement, Text, case, cast, exists, func, literal, or_, select
from sqlalchemy.orm import Session

from errkb.core.errors import BadInput
from errkb.core.models import Error, FlagBody, Occurrence, Snapshot
from errkb.core.search.index import search_docs
from errkb.core.search.terms import Phrase, parse_query, terms
from errkb.knowledge.who.evidence import in_test_code
from errkb.service.dialect import contains, fulltext_match
from errkb.service.search.ranking import Hit, Places, query_flags, ranked
from errkb.service.search.schemas import SearchHit, SearchResults

MAX_LIMIT = 100
_BATCH = 500  # error ids per IN (...) list
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


# A cursor is "tier:position" of the last hit shown, as the OpenAPI document declares it (a
# pattern a client, or a schema-driven tester, can check), far below the 32-bit INTEGER limit.
CURSOR_PATTERN = r"^[0-2]:[0-9]{1,9}$"


def _encode_cursor(tier: int, position: int) -> str:
    return f"{tier}:{position}"


def _decode_cursor(cursor: str) -> tuple[int, int]:
    """(tier, position) of a cursor this module made; anything else, forged or stale, is
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


def flag_names(session: Session, flag: str) -> tuple[tuple[str, ...], bool]:
    """The primary names of the flags `flag` names, and whether it only abbreviates them.

    A flag is named as written (`--tp-size`), by an alias (`--tensor-parallel-size`), without
    dashes (`tp-size`) or as the settings field (`tp_size`); failing those, as argparse reads an
    abbreviation: the start of one or more flags' names (`--tp`). Empty when no ingested
    version defines such a flag."""
    given = flag.strip()
    bare = given.lstrip("-")
    wanted = {given, "--" + bare, "--" + bare.replace("_", "-"), "-" + bare}
    dest = bare.replace("-", "_")
    found: set[str] = set()
    prefixed: set[str] = set()
    start = "--" + bare.replace("_", "-")
    rows = session.execute(select(FlagBody.name, FlagBody.flags, FlagBody.dest))
    for name, names, field in rows:
        every = {name, *(names or ())}
        if wanted & every or field == dest:
            found.add(name)
        elif len(bare) >= 2 and any(n.startswith(start) for n in every):
            prefixed.add(name)
    if found:
        return tuple(sorted(found)), False
    return tuple(sorted(prefixed)), bool(prefixed)


def _filters(
    session: Session,
    snapshot: str | None,
    path: str | None,
    flags: tuple[str, ...],
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
    if flags:
        out.append(or_(*(contains(session, d.c.flag_key, f"|{name}|") for name in flags)))
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
    notes: list[str] = []
    flags: tuple[str, ...] = ()
    if flag:
        flags, abbreviated = flag_names(session, flag)
        if abbreviated:
            notes.append(
                f"No ingested version defines the flag {flag.strip()}; it abbreviates "
                + " and ".join(flags)
                + ", searched instead."
            )
        flags = flags or (normalize_flag(flag),)
        if not abbreviated and not _known_flag(session, flags):
            notes.append(f"No ingested version defines the flag {flag.strip()}.")
    if exception and not _known_class(session, exception.strip()):
        notes.append(f"No ingested error is of the class {exception.strip()} or derived from it.")
    where = _filters(session, snapshot or None, path or None, flags, exception or None)
    tier: ColumnElement[Any] = literal(0)
    if phrases:
        where.append(fulltext_match(session, phrases, message_only=False))
        tier = case(
            (fulltext_match(session, (as_one_phrase(phrases),), message_only=True), EXACT),
            (fulltext_match(session, phrases, message_only=True), IN_MESSAGE),
            else_=ELSEWHERE,
        )
    after = _decode_cursor(cursor)[1] if cursor else -1
    # A flag filter asks about that flag: a message that names it is about it.
    asked = phrases + tuple(Phrase(tuple(terms(f))) for f in flags if flag)
    named = flags or query_flags(phrases)
    if not (asked or named):  # a listing (a module, a version, a class): the index's order
        # The cursor is the last sort key shown (with no filter at all, also its position).
        inner = select(d.c.error_id, d.c.sort_key).where(*where, d.c.sort_key > after)
        total = session.execute(select(func.count()).select_from(d).where(*where)).scalar_one()
        rows = session.execute(inner.order_by(d.c.sort_key).limit(limit + 1)).all()
        page = [(r.error_id, 0, r.sort_key) for r in rows]
    else:
        has_message = d.c.message_terms != ""
        columns = (d.c.error_id, tier, d.c.sort_key, has_message, d.c.message_terms, d.c.flag_key)
        hits = [Hit(*r) for r in session.execute(select(*columns).where(*where))]
        total = len(hits)
        places = _places(session, select(d.c.error_id).where(*where))
        order = ranked(hits, asked, places, named)
        chosen = order[after + 1 : after + 2 + limit]
        page = [(h.error_id, h.tier, after + 1 + n) for n, h in enumerate(chosen)]
    more = len(page) > limit
    page = page[:limit]
    items = hits_for(session, [(i, t < ELSEWHERE and bool(phrases)) for i, t, _ in page])
    return SearchResults(
        q=q,
        snapshot=snapshot or None,
        path=path or None,
        flag=flag or None,
        exception=exception or None,
        total=total,
        limit=limit,
        items=items,
        next_cursor=_encode_cursor(page[-1][1], page[-1][2]) if more else None,
        notes=notes,
    )


def _known_flag(session: Session, flags: tuple[str, ...]) -> bool:
    """Whether an ingested version defines one of these flags or an error involves one."""
    d = search_docs
    if session.execute(select(FlagBody.name).where(FlagBody.name.in_(flags)).limit(1)).first():
        return True
    involved = or_(*(contains(session, d.c.flag_key, f"|{name}|") for name in flags))
    return session.execute(select(d.c.error_id).where(involved).limit(1)).first() is not None


def _known_class(session: Session, exception: str) -> bool:
    """Whether an ingested error is of this class or of one derived from it."""
    found = select(Error.id).where(class_filter(session, Error.id, exception)).limit(1)
    return session.execute(found).first() is not None


def _places(session: Session, hit_ids: Any) -> dict[str, Places]:
    """Whether each hit is raised only in the project's tests, and the rank of the newest
    snapshot that raises it (one grouped read for every hit)."""
    keys = sorted({k for (k,) in session.execute(select(Snapshot.sort_key))})
    rank = {k: n for n, k in enumerate(keys)}
    test: dict[str, bool] = {}  # path -> in the tests, worked out once per distinct path
    tests_only: dict[str, bool] = {}
    newest: dict[str, int] = {}
    rows = session.execute(
        select(Occurrence.error_id, Occurrence.path, func.max(Snapshot.sort_key))
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .where(Occurrence.error_id.in_(hit_ids.scalar_subquery()))
        .group_by(Occurrence.error_id, Occurrence.path)
    )
    for error_id, path, key in rows:
        in_tests = test.get(path)
        if in_tests is None:
            in_tests = test[path] = in_test_code(path)
        tests_only[error_id] = tests_only.get(error_id, True) and in_tests
        newest[error_id] = max(newest.get(error_id, -1), rank[key])
    return {e: Places(tests_only[e], newest[e]) for e in newest}


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
    paths: dict[str, set[str]] = defaultdict(set)
    for error_id, path, line, label, skey in session.execute(occ):
        seen[error_id].setdefault(label, (skey, f"{path}:{line}"))
        paths[error_id].add(path)
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
                test_code=bool(paths[error_id]) and all(map(in_test_code, paths[error_id])),
            )
        )
    return hits
