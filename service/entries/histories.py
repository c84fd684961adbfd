"""An error's places as site histories: one per raise site, over every snapshot that has it.

A whole history holds a site in up to hundreds of snapshots, almost always with the same code.
Listing it once per snapshot made the largest entries megabytes; here a site is its path and
function, the snapshots it spans, the line it sits at in each run of snapshots (a new run where
it moved), and one body (conditions, snippet, message source) per distinct version of its code.

Occurrences are the same site from one snapshot to the next when they share path and function
(the k-th raise of the error in a function stays the k-th); a file move starts a new history,
which the timeline reports as a move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SlimOccurrence:
    """What the histories need of one stored occurrence."""

    snapshot: int  # position of its snapshot in the repo's order (oldest first)
    path: str
    line: int
    end_line: int
    qualname: str
    body: str  # site body hash


@dataclass
class LineRun:
    """Consecutive snapshots (in the site's own history) where the site sits at one line."""

    line: int
    end_line: int
    first: int  # snapshot positions
    last: int


@dataclass
class BodyRun:
    """One distinct version of the site's code and the snapshots that have it."""

    body: str
    first: int
    last: int
    count: int
    last_line: int  # the site's line in `last`, to number the snippet as there


@dataclass
class SiteHistory:
    """One raise site across the snapshots that have it."""

    path: str
    qualname: str
    ordinal: int  # 0 for the first raise of the error in this function, 1 for the next, ...
    snapshots: list[int] = field(default_factory=list)  # positions, ascending
    lines: list[LineRun] = field(default_factory=list)
    bodies: list[BodyRun] = field(default_factory=list)


def site_histories(occurrences: Sequence[SlimOccurrence]) -> list[SiteHistory]:
    """The occurrences grouped into histories, newest-present site first."""
    ordered = sorted(occurrences, key=lambda o: (o.snapshot, o.path, o.qualname, o.line))
    histories: dict[tuple[str, str, int], SiteHistory] = {}
    ordinal: dict[tuple[int, str, str], int] = {}
    for o in ordered:
        k = ordinal.get((o.snapshot, o.path, o.qualname), 0)
        ordinal[(o.snapshot, o.path, o.qualname)] = k + 1
        h = histories.get((o.path, o.qualname, k))
        if h is None:
            h = histories[(o.path, o.qualname, k)] = SiteHistory(o.path, o.qualname, k)
        _add(h, o)
    return sorted(
        histories.values(), key=lambda h: (-h.snapshots[-1], -len(h.snapshots), h.path, h.ordinal)
    )


def _add(h: SiteHistory, o: SlimOccurrence) -> None:
    h.snapshots.append(o.snapshot)
    run = h.lines[-1] if h.lines else None
    if run is not None and (run.line, run.end_line) == (o.line, o.end_line):
        run.last = o.snapshot
    else:
        h.lines.append(LineRun(o.line, o.end_line, o.snapshot, o.snapshot))
    body = next((b for b in h.bodies if b.body == o.body), None)
    if body is None:
        h.bodies.append(BodyRun(o.body, o.snapshot, o.snapshot, 1, o.line))
    else:
        body.last, body.count, body.last_line = o.snapshot, body.count + 1, o.line


def runs(positions: Sequence[int], present: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous spans of `positions` over the snapshots that exist (`present`, ascending):
    a span breaks only where a snapshot between two of them lacks the site."""
    index = {p: i for i, p in enumerate(present)}
    spans: list[tuple[int, int]] = []
    for p in positions:
        if spans and index[p] == index[spans[-1][1]] + 1:
            spans[-1] = (spans[-1][0], p)
        else:
            spans.append((p, p))
    return spans
