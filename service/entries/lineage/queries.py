"""The lineage's queries: the errors raised by functions of given names in given snapshots."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from errkb.core.models import Error, Occurrence
from errkb.service.queries import DbSession as Session


def same_function_errors(session: Session, snapshot_ids: set[int], names: set[str]) -> list[Any]:
    """(snapshot_id, path, qualname, error_id) of the occurrences raised in the snapshots by
    functions with one of the given names (the last part of their qualname)."""
    return list(
        session.execute(
            select(
                Occurrence.snapshot_id, Occurrence.path, Occurrence.qualname, Occurrence.error_id
            ).where(
                Occurrence.snapshot_id.in_(sorted(snapshot_ids)),
                Occurrence.function.in_(sorted(names)),
            )
        ).all()
    )


def error_kin(session: Session, ids: list[str]) -> list[Any]:
    """(id, exception, message, check_text) of the errors of these ids."""
    return list(
        session.execute(
            select(Error.id, Error.exception, Error.message, Error.check_text).where(
                Error.id.in_(ids)
            )
        ).all()
    )


def repo_error_kin(session: Session, repo_id: int) -> list[Any]:
    """(id, exception, message, check_text) of every error of a repo."""
    return list(
        session.execute(
            select(Error.id, Error.exception, Error.message, Error.check_text).where(
                Error.repo_id == repo_id
            )
        ).all()
    )
