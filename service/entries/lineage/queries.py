"""The lineage's queries: the errors raised by functions of given names in given snapshots."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import aliased

from errkb.core.models import Error, Occurrence
from errkb.service.queries import DbSession as Session


def errors_new_there(session: Session, there: int, own: int, names: set[str]) -> list[Any]:
    """(snapshot_id, path, qualname, id, exception, message, check_text) of the errors raised in
    snapshot `there` by functions with one of the given names (the last part of their
    qualname), leaving out those the same functions raise in snapshot `own` too.

    Only an error new next to this one's life can carry its check on. Reading every error of
    the functions' names instead (thousands for `__init__` or `forward` in a late release) was
    a fifth of an entry's cost on the whole sglang history."""
    named = sorted(names)
    beside = aliased(Occurrence)
    also_in_own = (
        select(beside.id)
        .where(
            beside.error_id == Occurrence.error_id,
            beside.snapshot_id == own,
            beside.function.in_(named),
        )
        .exists()
    )
    return list(
        session.execute(
            select(
                Occurrence.snapshot_id,
                Occurrence.path,
                Occurrence.qualname,
                Error.id,
                Error.exception,
                Error.message,
                Error.check_text,
            )
            .join(Error, Error.id == Occurrence.error_id)
            .where(
                Occurrence.snapshot_id == there,
                Occurrence.function.in_(named),
                ~also_in_own,
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
