"""Keeping the search index in step with the errors one snapshot at a time (see
`errkb.core.search.index` for what a document holds).

A new snapshot changes only the documents of its new errors and of the errors it gives a new
path, function or flag name; those are written, and the existing sort keys are shifted to make
room for the new errors. The result equals a full rebuild (`refresh_search_index`, still used
when the index is not in step with the errors table), at a cost that follows what is new rather
than the size of the knowledge base.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    func,
    insert,
    select,
    text,
    update,
)

from errkb.core.models import Error, Occurrence, SiteBody, Snapshot
from errkb.core.search.index import (
    OccurrenceTerms,
    Places,
    document_row,
    order_key,
    places_of,
    refresh_search_index,
    search_docs,
)

BATCH = 500  # keys per IN (...) list


def update_search_index(
    conn: Connection,
    snapshot_id: int,
    occurrences: Iterable[OccurrenceTerms],
    new_errors: Collection[str],
) -> int:
    """Bring the index in step with the snapshot just written in this transaction.

    `occurrences` are the snapshot's own, `new_errors` the ids it added to the errors table.
    Returns the number of documents written.
    """
    if conn.dialect.name == "postgresql":  # concurrent ingests shift the keys one at a time
        conn.execute(text("LOCK TABLE search_docs IN SHARE ROW EXCLUSIVE MODE"))
    new = set(new_errors)
    count = _documents(conn)
    errors_before = conn.execute(select(func.count()).select_from(Error)).scalar_one() - len(new)
    # Documents point to errors (foreign key) and the new errors were added just now, so
    # `errors_before` documents means one for each of the other errors.
    if count is None or count != errors_before:
        return refresh_search_index(conn)  # not in step with the errors table: rebuild

    fresh = places_of(o for o in occurrences if o[3] or o[0] in new)  # the rest add no flag
    flagged = sorted(e for e, (_, _, flags) in fresh.items() if flags and e not in new)
    grown = _gained_places(conn, snapshot_id) | _gained_flags(conn, flagged, fresh)
    changed = sorted(new | grown)
    places = {e: fresh[e] for e in new} | _all_places(conn, [e for e in changed if e not in new])
    columns = (Error.id, Error.exception, Error.message)
    errors = [
        r
        for ids in _batches(changed)
        for r in conn.execute(select(*columns).where(Error.id.in_(ids))).all()
    ]
    ranks = _make_room(conn, count, [r for r in errors if r.id in new])
    rows = [document_row(r.id, r.exception, r.message, places[r.id]) for r in errors]
    _rewrite_docs(conn, [r for r in rows if r["error_id"] not in new])
    _add_docs(conn, [r | {"sort_key": ranks[r["error_id"]]} for r in rows if r["error_id"] in new])
    return len(rows)


def _batches(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _documents(conn: Connection) -> int | None:
    """How many documents there are, None unless their keys are exactly 0..n-1."""
    key = search_docs.c.sort_key
    stats = select(func.count(), func.count(key.distinct()), func.min(key), func.max(key))
    n, distinct, low, high = conn.execute(stats).one()
    if n == 0 or (distinct == n and low == 0 and high == n - 1):
        return int(n)
    return None


def _gained_flags(conn: Connection, error_ids: Sequence[str], fresh: dict[str, Places]) -> set[str]:
    """Errors among these whose flag key lacks one of the snapshot's flag names for them."""
    c = search_docs.c
    out = set()
    for ids in _batches(error_ids):
        for error, key in conn.execute(select(c.error_id, c.flag_key).where(c.error_id.in_(ids))):
            if any("|" in name or f"|{name}|" not in key for name in fresh[error][2]):
                out.add(error)
    return out


def _gained_places(conn: Connection, snapshot_id: int) -> set[str]:
    """Errors of the snapshot with a path or function none of their other occurrences has.

    Most occurrences sit where one of their error sat in the snapshot written before: that one
    snapshot's rows settle them, and only the errors left are read across the others. (One
    probe per occurrence into its error's other occurrences cost 40 s a release late in
    sglang's history: an import error holds thousands of occurrences, probed once for each.)
    """
    o = Occurrence
    now = conn.execute(
        select(o.error_id, o.path, o.qualname).where(o.snapshot_id == snapshot_id)
    ).all()
    repo = select(Snapshot.repo_id).where(Snapshot.id == snapshot_id).scalar_subquery()
    before = conn.execute(
        select(func.max(Snapshot.id)).where(Snapshot.repo_id == repo, Snapshot.id != snapshot_id)
    ).scalar()
    witness = _Seen(
        conn.execute(select(o.error_id, o.path, o.qualname).where(o.snapshot_id == before))
        if before is not None
        else ()
    )
    left = sorted({e for e, p, q in now if witness.gains(e, p, q)})
    elsewhere = _Seen(
        row
        for ids in _batches(left)
        for row in conn.execute(
            select(o.error_id, o.path, o.qualname).where(
                o.error_id.in_(ids), o.snapshot_id != snapshot_id
            )
        )
    )
    kept = set(left)
    return {e for e, p, q in now if e in kept and elsewhere.gains(e, p, q)}


class _Seen:
    """Where some occurrences sit: (error, path, function), (error, path), (error, function)."""

    def __init__(self, rows: Iterable[Any]) -> None:
        self.sites: set[tuple[str, str, str]] = set()
        self.paths: set[tuple[str, str]] = set()
        self.functions: set[tuple[str, str]] = set()
        for error, path, qualname in rows:
            self.sites.add((error, path, qualname))
            self.paths.add((error, path))
            self.functions.add((error, qualname))

    def gains(self, error: str, path: str, qualname: str) -> bool:
        """Whether an occurrence there gives its error a path or a function these lack."""
        if (error, path, qualname) in self.sites:
            return False
        return (error, path) not in self.paths or (error, qualname) not in self.functions


def _all_places(conn: Connection, error_ids: Sequence[str]) -> dict[str, Places]:
    """Paths, functions and flag names over every occurrence of these errors.

    An occurrence repeats its site's place and body in most snapshots: the distinct ones are
    read, and each body's flags once (decoding them per occurrence was most of the time)."""
    o = Occurrence
    distinct = [
        row
        for ids in _batches(error_ids)
        for row in conn.execute(
            select(o.error_id, o.path, o.qualname, o.body_hash)
            .where(o.error_id.in_(ids))
            .distinct()
        )
    ]
    hashes = sorted({h for *_, h in distinct})
    flags = {
        h: f
        for chunk in _batches(hashes)
        for h, f in conn.execute(
            select(SiteBody.hash, SiteBody.flags).where(SiteBody.hash.in_(chunk))
        )
    }
    return dict(places_of((e, path, q, flags.get(h)) for e, path, q, h in distinct))


def _make_room(conn: Connection, count: int, added: Sequence[Any]) -> dict[str, int]:
    """Shift the keys of the `count` existing documents (0..count-1, in order) to make room for
    the added errors; returns the added errors' keys.

    An existing key moves up by the number of added errors sorting before it. That shift grows
    along the key order: one UPDATE per run of equal shift, highest run first, so no row is
    moved twice.
    """
    placed = sorted(added, key=lambda r: order_key(r.message, r.id))
    edges = _positions(conn, [order_key(r.message, r.id) for r in placed], count)
    edges.append(count)
    runs = [
        {"lo": edges[j], "hi": edges[j + 1] - 1, "shift": j + 1}
        for j in reversed(range(len(placed)))
        if edges[j] < edges[j + 1]
    ]
    if runs:
        key = search_docs.c.sort_key
        stmt = (
            update(search_docs)
            .where(and_(key >= bindparam("lo"), key <= bindparam("hi")))
            .values(sort_key=key + bindparam("shift"))
        )
        conn.execute(stmt, runs)
    return {r.id: edges[j] + j for j, r in enumerate(placed)}


def _positions(conn: Connection, keys: Sequence[tuple[str, str]], count: int) -> list[int]:
    """For each (folded message, id), how many existing documents sort before it.

    A bisection over the keys 0..count-1 for all of them at once: each round reads the
    documents at the current midpoints, so about log2(count) small reads in all.
    """
    lo, hi = [0] * len(keys), [count] * len(keys)
    d = search_docs.c
    while mids := sorted({(a + b) // 2 for a, b in zip(lo, hi, strict=True) if a < b}):
        at: dict[int, tuple[str, str]] = {}
        for chunk in _batches(mids):
            probe = (
                select(d.sort_key, Error.message, Error.id)
                .join(Error, Error.id == d.error_id)
                .where(d.sort_key.in_(chunk))
            )
            at.update((k, order_key(m, i)) for k, m, i in conn.execute(probe))
        for n, key in enumerate(keys):
            if lo[n] < hi[n]:
                mid = (lo[n] + hi[n]) // 2
                if at[mid] < key:
                    lo[n] = mid + 1
                else:
                    hi[n] = mid
    return lo


def _rewrite_docs(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Replace the text of existing documents, keeping FTS5 in step on SQLite."""
    if not rows:
        return
    c = search_docs.c
    fts = conn.dialect.name == "sqlite"
    if fts:  # an external-content FTS5 table forgets a row given its indexed values
        forget = text(
            "INSERT INTO search_fts(search_fts, rowid, message_terms, meta_terms) "
            "VALUES ('delete', :id, :message_terms, :meta_terms)"
        )
        for ids in _batches([r["error_id"] for r in rows]):
            old = select(c.id, c.message_terms, c.meta_terms).where(c.error_id.in_(ids))
            conn.execute(forget, [r._asdict() for r in conn.execute(old)])
    text_columns = ("message_terms", "meta_terms", "flag_key")
    conn.execute(
        update(search_docs).where(c.error_id == bindparam("key")),
        [{"key": r["error_id"]} | {k: r[k] for k in text_columns} for r in rows],
    )
    if fts:
        _index(conn, [r["error_id"] for r in rows])


def _add_docs(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert the documents of new errors, and index them in FTS5 on SQLite."""
    if rows:
        conn.execute(insert(search_docs), rows)
        if conn.dialect.name == "sqlite":
            _index(conn, [r["error_id"] for r in rows])


def _index(conn: Connection, error_ids: Sequence[str]) -> None:
    """Add these errors' documents to the FTS5 index (SQLite)."""
    add = text(
        "INSERT INTO search_fts(rowid, message_terms, meta_terms) "
        "SELECT id, message_terms, meta_terms FROM search_docs WHERE error_id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
    for ids in _batches(error_ids):
        conn.execute(add, {"ids": list(ids)})
