"""The lineage's queries: the errors raised by functions of given names in given snapshots."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select

from errkb.core.models import Error, Occurrence
from errkb.service.queries import DbSession as Session


def same_function_errors(session: Session, snapshot_ids: set[int], names: set[str]) -> list[Any]:
    """(snapshot_id, path, qualname, error_id) of the occurrences raised in the snapshots by
    functions with one of the given names (the last part of their qualname)."""
    values = {"snaps": sorted(snapshot_ids), "names": sorted(names)}
    return list(session.execute(_SAME_FUNCTION, values).all())


# Built once: both run for nearly every entry doc.
_SAME_FUNCTION = select(
    Occurrence.snapshot_id, Occurrence.path, Occurrence.qualname, Occurrence.error_id
).where(
    Occurrence.snapshot_id.in_(bindparam("snaps", expanding=True)),
    Occurrence.function.in_(bindparam("names", expanding=True)),
)
_ERROR_KIN = select(Error.id, Error.exception, Error.message, Error.check_text).where(
    Error.id.in_(bindparam("ids", expanding=True))
)


def error_kin(session: Session, ids: list[str]) -> list[Any]:
    """(id, exception, message, check_text) of the errors of these ids."""
    return list(session.execute(_ERROR_KIN, {"ids": ids}).all())


def repo_error_kin(session: Session, repo_id: int) -> list[Any]:
    """(id, exception, message, check_text) of every error of a repo."""
    return list(
        session.execute(
            select(Error.id, Error.exception, Error.message, Error.check_text).where(
                Error.repo_id == repo_id
            )
        ).all()
    )
