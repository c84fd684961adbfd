"""Site histories (`histories.py`) as served: labels for snapshot positions, bodies numbered
as in the newest snapshot of each version, links pinned to it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from errkb.core.models import SiteBody, Snapshot, shifted_snippet
from errkb.core.records import Condition
from errkb.service.entries.histories import SiteHistory, runs
from errkb.service.entries.schemas import (
    ConditionOut,
    LineOut,
    SiteHistoryOut,
    SiteVersionOut,
    SnippetOut,
    SpanOut,
)

_CONDITIONS = TypeAdapter(tuple[Condition, ...])


def pinned_url(snap: Snapshot, path: str, line: int, end_line: int | None = None) -> str | None:
    """A link to the lines in that snapshot's source, when the snapshot has a link base."""
    if not snap.link_base:
        return None
    span = f"#L{line}" + (f"-L{end_line}" if end_line and end_line != line else "")
    return f"{snap.link_base}{path}{span}"


def conditions_out(conditions: Sequence[Condition]) -> list[ConditionOut]:
    """Condition records as served."""
    return [
        ConditionOut(
            kind=c.kind,
            expr=c.expr,
            holds=c.holds,
            line=c.line,
            text=c.text,
            resolved=dict(c.resolved),
        )
        for c in conditions
    ]


def _version_out(
    body: SiteBody, first: Snapshot, last: Snapshot, count: int, path: str, line: int
) -> SiteVersionOut:
    raw: list[dict[str, Any]] = [c | {"line": c["line"] + line} for c in body.conditions or []]
    snippet = shifted_snippet(body.snippet or {}, line)
    return SiteVersionOut(
        from_snapshot=first.label,
        to_snapshot=last.label,
        snapshots=count,
        line=line,
        conditions=conditions_out(_CONDITIONS.validate_python(raw)),
        snippet=SnippetOut(
            start=int(snippet.get("start", line)),
            lines=list(snippet.get("lines", ())),
            raise_start=int(snippet.get("raise_start", line)),
            raise_end=int(snippet.get("raise_end", line + body.end_offset)),
        ),
        raise_source=body.raise_source,
        flags=list(dict.fromkeys(link["flag"] for link in body.flags or [])),
        url=pinned_url(last, path, line, line + body.end_offset),
    )


def history_out(
    h: SiteHistory,
    snapshots: Sequence[Snapshot],
    bodies: dict[str, SiteBody],
    *,
    versions: int,
    line_runs: int,
) -> SiteHistoryOut:
    """One site history with its newest `versions` code versions and `line_runs` line runs."""
    newest = sorted(h.bodies, key=lambda b: (-b.last, -b.first))
    last_line = h.lines[-1]
    return SiteHistoryOut(
        path=h.path,
        function=h.qualname,
        first_snapshot=snapshots[h.snapshots[0]].label,
        last_snapshot=snapshots[h.snapshots[-1]].label,
        snapshots=len(h.snapshots),
        spans=[
            SpanOut(
                from_snapshot=snapshots[a].label,
                to_snapshot=snapshots[b].label,
                snapshots=b - a + 1,
            )
            for a, b in runs(h.snapshots, range(len(snapshots)))
        ],
        lines=[
            LineOut(
                line=r.line,
                end_line=r.end_line,
                from_snapshot=snapshots[r.first].label,
                to_snapshot=snapshots[r.last].label,
            )
            for r in h.lines[-line_runs:]
        ],
        lines_total=len(h.lines),
        versions=[
            _version_out(
                bodies[v.body], snapshots[v.first], snapshots[v.last], v.count, h.path, v.last_line
            )
            for v in newest[:versions]
        ],
        versions_total=len(newest),
        url=pinned_url(snapshots[h.snapshots[-1]], h.path, last_line.line, last_line.end_line),
    )
