"""The entries domain's SQL: the reads that build an entry, and the stored entry docs.

Every query of `build.py`, `facts.py`, `ai.py` and `docs.py` lives here, and those of
`related` in `related.queries` (the full-text part of related errors in `service/dialect.py`),
so those modules stay free of SQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine, Row, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session, defer

from errkb.core.errors import NotFound
from errkb.core.models import (
    AiExplanation,
    EntryDoc,
    Error,
    Flag,
    Occurrence,
    Repo,
    SiteBody,
    Snapshot,
)
from errkb.service.queries import kept_rows


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


def doc_body_direct(engine: Engine, error_id: str, key: str, variant: str) -> bytes | None:
    """`doc_body` on a pooled connection's cursor, without a session or statement compilation.

    The first read of an entry in each server process takes this path; through the ORM it cost
    about 0.6 ms of CPU, most of it building and compiling the statement (profiled).
    """
    mark = "?" if engine.dialect.paramstyle == "qmark" else "%s"
    sql = (
        f"SELECT body FROM entry_docs WHERE error_id = {mark} AND content_key = {mark} "
        f"AND variant = {mark}"
    )
    conn = engine.raw_connection()
    try:
        cursor = conn.cursor()
        cursor.execute(sql, (error_id, key, variant))
        row = cursor.fetchone()
        cursor.close()
    finally:
        conn.close()  # back to the pool, which ends the read transaction
    return bytes(row[0]) if row is not None else None


def write_docs(session: Session, key: str, variant: str, rows: list[tuple[str, bytes]]) -> None:
    """Store docs (error id, compressed JSON) built under `key`, replacing older ones."""
    if not rows:
        return
    session.execute(delete(EntryDoc).where(EntryDoc.error_id.in_([i for i, _ in rows])))
    session.execute(
        insert(EntryDoc),
        [{"error_id": i, "content_key": key, "variant": variant, "body": b} for i, b in rows],
    )


def drop_docs_except(session: Session, key: str, variant: str) -> None:
    """Delete every doc not built under `key` and `variant` (errors that lost their entry)."""
    session.execute(
        delete(EntryDoc).where((EntryDoc.content_key != key) | (EntryDoc.variant != variant))
    )


def rekey_docs(session: Session, old: str, new: str, changed: str) -> None:
    """Docs current under `old` stay current under `new`, except the changed error's."""
    session.execute(delete(EntryDoc).where(EntryDoc.error_id == changed))
    session.execute(update(EntryDoc).where(EntryDoc.content_key == old).values(content_key=new))


# --- the reads that build an entry (build.py, facts.py, ai.py) ---
# Those run for every entry are built once, with bound (and expanding) parameters: building a
# statement and its cache key on each call cost a whole-history doc about a tenth.

_ERROR_AND_REPO = (
    select(Error, Repo).join(Repo, Repo.id == Error.repo_id).where(Error.id == bindparam("id"))
)


def error_and_repo(session: Session, error_id: str) -> tuple[Error, Repo]:
    """The error and its repo; NotFound for an unknown id."""
    row = session.execute(_ERROR_AND_REPO, {"id": error_id}).first()
    if row is None:
        raise NotFound(f"no error with id {error_id!r}")
    return row[0], row[1]


def repo_snapshots(session: Session, repo_id: int) -> list[Snapshot]:
    """A repo's snapshots in version order, without the ingest counts no entry shows (decoding
    their JSON for 151 snapshots cost a doc 7%); reading one raises, never loads row by row.
    Read once per session (`kept_rows`): every entry of a chunk of docs reads the same."""
    query = (
        select(Snapshot)
        .where(Snapshot.repo_id == repo_id)
        .order_by(Snapshot.sort_key, Snapshot.id)
        .options(
            defer(Snapshot.skipped, raiseload=True), defer(Snapshot.site_counts, raiseload=True)
        )
    )
    return kept_rows(session, ("repo_snapshots", repo_id), lambda: list(session.scalars(query)))


def snapshot_by_label(session: Session, label: str) -> Snapshot | None:
    """The first snapshot with this label, if any."""
    return session.scalars(select(Snapshot).where(Snapshot.label == label)).first()


_SLIM_OCCURRENCES = (
    select(
        Occurrence.snapshot_id,
        Occurrence.path,
        Occurrence.line,
        Occurrence.end_line,
        Occurrence.qualname,
        Occurrence.body_hash,
    )
    .where(Occurrence.error_id == bindparam("id"))
    .order_by(Occurrence.path, Occurrence.line)
)


def slim_occurrences(session: Session, error_id: str) -> list[Any]:
    """Every occurrence of an error, slim (snapshot, place, body hash), by path and line."""
    return list(session.execute(_SLIM_OCCURRENCES, {"id": error_id}).all())


_OCCURRENCES_IN = (
    select(Occurrence)
    .where(Occurrence.error_id == bindparam("id"), Occurrence.snapshot_id == bindparam("snap"))
    .order_by(Occurrence.path, Occurrence.line)
)


def occurrences_in(session: Session, error_id: str, snapshot_id: int) -> list[Occurrence]:
    """An error's occurrences in one snapshot, in full, by path and line."""
    return list(session.scalars(_OCCURRENCES_IN, {"id": error_id, "snap": snapshot_id}))


_SITE_BODIES = select(SiteBody).where(SiteBody.hash.in_(bindparam("hashes", expanding=True)))


def site_bodies(session: Session, hashes: set[str]) -> dict[str, SiteBody]:
    """Site bodies by hash."""
    wanted, out = sorted(hashes), {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        out.update({b.hash: b for b in session.scalars(_SITE_BODIES, {"hashes": chunk})})
    return out


def body_signature_rows(
    session: Session, hashes: set[str] | None = None
) -> Iterator[tuple[str, Any, str]]:
    """(hash, packed code, raise source) of the given site bodies, or of every one."""
    stmt = select(SiteBody.hash, SiteBody.code, SiteBody.raise_source)
    if hashes is None:
        for h, conditions, raise_source in session.execute(stmt):
            yield h, conditions, raise_source
        return
    wanted = sorted(hashes)
    for start in range(0, len(wanted), 500):
        chunk = stmt.where(SiteBody.hash.in_(wanted[start : start + 500]))
        for h, conditions, raise_source in session.execute(chunk):
            yield h, conditions, raise_source


def occurrence_count(session: Session, error_id: str) -> int:
    """How many occurrences an error has (all snapshots, all sites)."""
    return session.execute(
        select(func.count()).select_from(Occurrence).where(Occurrence.error_id == error_id)
    ).scalar_one()


def occurrence_rows(
    session: Session, error_id: str, offset: int, limit: int
) -> list[tuple[Occurrence, Snapshot]]:
    """A page of an error's occurrences, newest snapshot first, then by path and line."""
    rows = session.execute(
        select(Occurrence, Snapshot)
        .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
        .where(Occurrence.error_id == error_id)
        .order_by(
            Snapshot.sort_key.desc(),
            Snapshot.id.desc(),
            Occurrence.path,
            Occurrence.line,
            Occurrence.id,
        )
        .offset(offset)
        .limit(limit)
    ).all()
    return [(occ, snap) for occ, snap in rows]


_DEFINING_FILES = (
    select(Flag.path)
    .where(Flag.snapshot_id == bindparam("snap"), Flag.dest.in_(bindparam("dests", expanding=True)))
    .correlate(None)  # the same tables as the outer query: a subquery of its own
)
_FLAGS_OF_FILES = select(Flag).where(
    Flag.snapshot_id == bindparam("snap"), Flag.path.in_(_DEFINING_FILES)
)


def flags_of_files_defining(session: Session, snapshot_id: int, dests: set[str]) -> list[Flag]:
    """The flags defined in a snapshot's files that define any of `dests`."""
    return list(session.scalars(_FLAGS_OF_FILES, {"snap": snapshot_id, "dests": sorted(dests)}))


def snapshot_flags(session: Session, snapshot_id: int) -> list[Flag]:
    """Every flag defined in a snapshot."""
    return list(session.scalars(select(Flag).where(Flag.snapshot_id == snapshot_id)))


def repo_placement_rows(session: Session, repo_id: int) -> Iterator[Row[Any]]:
    """Every occurrence of a repo, slim (error, snapshot, place, body hash), by path and line."""
    return iter(
        session.execute(
            select(
                Occurrence.error_id,
                Occurrence.snapshot_id,
                Occurrence.path,
                Occurrence.line,
                Occurrence.qualname,
                Occurrence.body_hash,
            )
            .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            .where(Snapshot.repo_id == repo_id)
            .order_by(Occurrence.path, Occurrence.line)
        )
    )


def snapshot_occurrences_with_errors(
    session: Session, snapshot_id: int
) -> Iterator[tuple[Occurrence, Error]]:
    """A snapshot's occurrences with their errors, by error, path and line."""
    rows = session.execute(
        select(Occurrence, Error)
        .join(Error, Error.id == Occurrence.error_id)
        .where(Occurrence.snapshot_id == snapshot_id)
        .order_by(Occurrence.error_id, Occurrence.path, Occurrence.line)
    )
    return ((occ, error) for occ, error in rows)


def has_ai_explanations(session: Session) -> bool:
    """Whether any AI prose is stored, read once per session: most knowledge bases have none,
    and asking for each entry of a chunk of docs cost a doc 4%."""
    known: bool | None = session.info.get("has_ai_explanations")
    if known is None:
        found = session.execute(select(AiExplanation.error_id).limit(1)).first()
        known = session.info["has_ai_explanations"] = found is not None
    return known


def ai_explanations(session: Session, error_id: str, template_hash: str) -> list[AiExplanation]:
    """Stored AI prose of an error's template, newest first."""
    return list(
        session.scalars(
            select(AiExplanation)
            .where(
                AiExplanation.error_id == error_id,
                AiExplanation.template_hash == template_hash,
            )
            .order_by(AiExplanation.created_at.desc())
        )
    )


def delete_ai_explanation(session: Session, error_id: str, template_hash: str, model: str) -> None:
    """Drop the stored prose of (error, template, model)."""
    session.execute(
        delete(AiExplanation).where(
            AiExplanation.error_id == error_id,
            AiExplanation.template_hash == template_hash,
            AiExplanation.model == model,
        )
    )
