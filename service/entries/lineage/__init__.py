"""Where an error's check lives on under another id: the rows `knowledge.history.lineage` compares.

(`same_function_errors`, `error_kin` and `repo_error_kin`, from `queries`, are re-exported.)

An entry's timeline asks, for the snapshot after the error's last (and the one before its
first), which errors the functions of the same names raise there; `lineage_of` reads them in one
query (`build_entry`) or from the rows already read for a whole release (`snapshot_explanations`).
Functions named `__init__` or `forward` raise hundreds of errors in a snapshot, and nearly all of
them are raised in both snapshots of a pair: so the rows name the errors by id, and only the
candidates left (new in the snapshot after) are read in full.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from errkb.core.models import Snapshot, function_name
from errkb.knowledge.facts import TimelineFacts
from errkb.knowledge.history.lineage import Kin, carried_by, with_lineage
from errkb.service.entries.lineage.queries import error_kin, repo_error_kin, same_function_errors

Places = set[tuple[str, str]]  # (path, function) of an error's occurrences in one snapshot


def kin_of(row: Any) -> Kin:
    """An error row (or a row of id, exception, message, check_text) as the lineage sees it."""
    check = row.check_text
    return Kin(row.id, row.exception, row.message or "", check)


Raised = tuple[int, str, str, str]  # (snapshot id, path, qualname, error id) of an occurrence
Kins = Callable[[list[str]], dict[str, Kin]]  # the errors of these ids, as the lineage sees them


def lineage_of(
    error: Any,
    tl: TimelineFacts,
    snapshots: list[Snapshot],
    places: dict[int, Places],
    raised_in: Callable[[set[int], set[str]], list[Raised]],
    kins: Kins,
) -> TimelineFacts:
    """The timeline with the errors that carry the check on before and after the error's life:
    those raised by functions of the same names in the snapshot after its last (and before its
    first), and not in the error's own snapshot next to it. `raised_in(snapshot ids, function
    names)` reads them, in one query; `kins(ids)` reads the candidates' messages and checks."""
    by_label = {s.label: s.id for s in snapshots}
    pairs = [(tl.gone_in, tl.last_seen), (tl.absent_before, tl.first_seen)]
    wanted = [(by_label[t], by_label[o]) for t, o in pairs if t is not None]
    names = {function_name(q) for _, o in wanted for _, q in places.get(o, ())}
    if not names:
        return tl
    found = raised_in({i for pair in wanted for i in pair}, names)

    def carrier(there: str | None, own: str) -> str | None:
        mine = places.get(by_label[own], set())
        if there is None or not mine:
            return None
        at, named = by_label[there], {function_name(q) for _, q in mine}
        # a carrier is new there: a sibling check raised beside this one all along is not it
        beside = {i for s, _, q, i in found if s == by_label[own] and function_name(q) in named}
        new = [
            (i, (p, q) in mine)
            for s, p, q, i in found
            if s == at and function_name(q) in named and i not in beside
        ]
        known = kins(list(dict.fromkeys(i for i, _ in new))) if new else {}
        return carried_by(kin_of(error), [(known[i], same_place) for i, same_place in new])

    return with_lineage(
        tl, carrier(tl.gone_in, tl.last_seen), carrier(tl.absent_before, tl.first_seen)
    )


__all__ = [
    "Kins",
    "Places",
    "Raised",
    "error_kin",
    "function_name",
    "kin_of",
    "lineage_of",
    "repo_error_kin",
    "same_function_errors",
]
