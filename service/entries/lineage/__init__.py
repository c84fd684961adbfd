"""Where an error's check lives on under another id: the rows `knowledge.lineage` compares.

(`errors_new_there` and `repo_error_kin`, from `queries`, are re-exported.)

An entry's timeline asks, for the snapshot after the error's last (and the one before its
first), which errors the functions of the same names raise there and not next to it; `lineage_of`
reads them in a query each (`build_entry`) or from the rows already read for a whole release
(`snapshot_explanations`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from errkb.core.models import Snapshot
from errkb.knowledge.facts import TimelineFacts
from errkb.knowledge.lineage import Kin, carried_by, with_lineage
from errkb.service.entries.lineage.queries import errors_new_there, repo_error_kin

Places = set[tuple[str, str]]  # (path, function) of an error's occurrences in one snapshot


def kin_of(row: Any) -> Kin:
    """An error row (or a row of id, exception, message, check_text) as the lineage sees it."""
    check = row.check_text
    return Kin(row.id, row.exception, row.message or "", check)


Raised = tuple[int, str, str, Kin]  # (snapshot id, path, qualname, the error) of an occurrence
# (there, own, function names) -> the errors those functions raise in snapshot `there` and not
# in snapshot `own`
RaisedIn = Callable[[int, int, set[str]], list[Raised]]


def lineage_of(
    error: Any,
    tl: TimelineFacts,
    snapshots: list[Snapshot],
    places: dict[int, Places],
    raised_in: RaisedIn,
) -> TimelineFacts:
    """The timeline with the errors that carry the check on before and after the error's life:
    those raised by functions of the same names in the snapshot after its last (and before its
    first), and not in the error's own snapshot next to it (a sibling check raised beside this
    one all along is not a carrier). `raised_in(there, own, function names)` reads them."""
    by_label = {s.label: s.id for s in snapshots}

    def carrier(there: str | None, own: str) -> str | None:
        mine = places.get(by_label[own], set())
        if there is None or not mine:
            return None
        named = {function_name(q) for _, q in mine}
        found = raised_in(by_label[there], by_label[own], named)
        return carried_by(kin_of(error), [(k, (p, q) in mine) for _, p, q, k in found])

    return with_lineage(
        tl, carrier(tl.gone_in, tl.last_seen), carrier(tl.absent_before, tl.first_seen)
    )


def function_name(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


__all__ = [
    "Places",
    "Raised",
    "function_name",
    "kin_of",
    "lineage_of",
    "RaisedIn",
    "errors_new_there",
    "repo_error_kin",
]
