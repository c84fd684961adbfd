"""The SQL of an entry's related errors (`related`): the same files' other errors, those
sharing its flags, and the messages of the similar ones (the full-text part is in
`errkb.service.dialect`). Statements run for every entry are built once, as in `queries`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from errkb.core.models import Error, ErrorFlag, Occurrence


def same_file_rows(
    session: Session, error_id: str, snapshot_id: int, paths: list[str]
) -> list[Any]:
    """Other errors' occurrences in the same files of a snapshot (id, place, title)."""
    values = {"snap": snapshot_id, "paths": paths, "id": error_id}
    return list(session.execute(_SAME_FILE_ROWS, values).all())


_SAME_FILE_ROWS = (
    select(Occurrence.error_id, Occurrence.path, Occurrence.line, Occurrence.qualname, Error.title)
    .join(Error, Error.id == Occurrence.error_id)
    .where(
        Occurrence.snapshot_id == bindparam("snap"),
        Occurrence.path.in_(bindparam("paths", expanding=True)),
        Occurrence.error_id != bindparam("id"),
    )
)


def shared_flag_rows(
    session: Session, error_id: str, snapshot_id: int, dests: list[str], limit: int
) -> list[tuple[str, str, str]]:
    """(error id, dest, title) for the `limit` errors sharing the most of `dests` in a snapshot."""
    where = (
        ErrorFlag.snapshot_id == snapshot_id,
        ErrorFlag.dest.in_(dests),
        ErrorFlag.error_id != error_id,
    )
    top = session.scalars(
        select(ErrorFlag.error_id)
        .where(*where)
        .group_by(ErrorFlag.error_id)
        .order_by(func.count().desc(), ErrorFlag.error_id)
        .limit(limit)
    ).all()
    if not top:
        return []
    rows = session.execute(
        select(ErrorFlag.error_id, ErrorFlag.dest, Error.title)
        .join(Error, Error.id == ErrorFlag.error_id)
        .where(*where, ErrorFlag.error_id.in_(list(top)))
    ).all()
    return [(i, d, t) for i, d, t in rows]


def error_messages(session: Session, ids: list[str], repo_id: int) -> list[tuple[str, str, str]]:
    """(id, title, message) of the given errors of a repo."""
    rows = session.execute(_ERROR_MESSAGES, {"ids": ids, "repo": repo_id}).all()
    return [(i, t, m) for i, t, m in rows]


_ERROR_MESSAGES = select(Error.id, Error.title, Error.message).where(
    Error.id.in_(bindparam("ids", expanding=True)), Error.repo_id == bindparam("repo")
)
