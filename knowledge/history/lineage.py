"""Whether an error's check lives on under another id in the snapshot after its last one.

An error's id follows its message, so a reworded message, an assert turned into a `raise`, or
a placeholder renamed makes a new error: the old id is "not raised since" the next release, but
the check is still there. An upgrade (or a downgrade, for the snapshot before the first) fixes
nothing then, so the version solutions look here first. The check carries on when a function of
the same name (the file may have moved) raises, in that snapshot, an error whose message is
worded much like this one, or whose assert checks the same thing; or when the same function of
the same file raises one of the same class, neither having words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from errkb.knowledge.facts import TimelineFacts
from errkb.knowledge.history.related import similarity

MIN_SIMILAR = 0.5  # Jaccard similarity of the messages' words


@dataclass(frozen=True)
class Kin:
    """An error as the lineage compares it."""

    id: str
    exception: str
    message: str
    check: str | None = None


def _same_check(a: str | None, b: str | None) -> bool:
    return bool(a and b) and " ".join((a or "").split()) == " ".join((b or "").split())


def carried_by(error: Kin, candidates: Iterable[tuple[Kin, bool]]) -> str | None:
    """The id of the candidate that carries the error's check on; each candidate is raised in
    a function of the same name, and is flagged True when that is the same file's function."""
    best, score = None, 0.0
    for c, same_place in candidates:
        if c.id == error.id:
            continue
        if _same_check(error.check, c.check):
            return c.id
        s = similarity(error.message, c.message)
        if s >= MIN_SIMILAR and s > score:
            best, score = c.id, s
        wordless = not error.message.strip() and not c.message.strip() and not error.check
        if best is None and same_place and wordless and c.exception == error.exception:
            best = c.id
    return best


def with_lineage(
    tl: TimelineFacts, successor: str | None, predecessor: str | None
) -> TimelineFacts:
    """The timeline, saying where the check lives on before and after this error's life."""
    if successor is None and predecessor is None:
        return tl
    notes = []
    if successor is not None:
        notes.append(
            f"in {tl.gone_in} the same check is still there, raised as another error "
            f"({successor}): upgrading does not remove it"
        )
    if predecessor is not None:
        notes.append(
            f"in {tl.absent_before} the same check was there as another error ({predecessor})"
        )
    said = tl.summary.removesuffix(".")
    if tl.gone_in is not None and successor is not None:
        said = said.replace(
            f"not raised since {tl.gone_in}", f"not raised with this message since {tl.gone_in}"
        )
    summary = said + "; " + "; ".join(notes) + "."
    return replace(tl, successor=successor, predecessor=predecessor, summary=summary)
