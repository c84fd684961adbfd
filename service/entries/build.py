"""`build_entry`: the one function that assembles an error's full entry from the database.

The JSON route, the HTML page, `errkb show` and the static export all call it. It reads the
rows in a handful of queries (error, occurrences, snapshots, flag definitions, related-error
candidates, cached AI prose) and hands them to the pure synthesis in `errkb.knowledge`.

An entry stays small whatever the history: its places are site histories (each distinct
version of a site's code once), only the shown snapshot's occurrences are listed in full, and
the per-snapshot list is paginated (`occurrence_page`).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from errkb.core.builtin_classes import builtin_chain
from errkb.core.errors import BadInput, NotFound
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.core.records import FlagDef, FlagLink, flag_links
from errkb.core.settings import Settings
from errkb.knowledge.facts import Involvement, TimelineFacts
from errkb.service.entries.ai import cached_explanation
from errkb.service.entries.facts import (
    catalog_for,
    explanation_of,
    merged_links,
    placement,
    signature_of,
    site_of,
    timeline_of,
)
from errkb.service.entries.histories import SlimOccurrence, site_histories
from errkb.service.entries.history_out import conditions_out, history_out, pinned_url
from errkb.service.entries.queries import (
    error_and_repo,
    occurrence_count,
    occurrence_rows,
    occurrences_in,
    repo_snapshots,
    site_bodies,
    slim_occurrences,
)
from errkb.service.entries.related import related_errors
from errkb.service.entries.schemas import (
    Entry,
    FlagOut,
    OccurrenceOut,
    OccurrencePage,
    RelatedOut,
    RepoOut,
    SnapshotProvenance,
    Timeline,
    TimelinePointOut,
)
from errkb.service.queries import DbSession as Session


def _link(link_base: str | None, path: str, line: int) -> str | None:
    return f"{link_base}{path}#L{line}" if link_base else None


def _flag_out(inv: Involvement, link_base: str | None) -> FlagOut:
    d = inv.definition
    return FlagOut(
        flag=inv.flag,
        flags=list(d.flags) if d else [inv.flag],
        dest=inv.dest,
        sides=[s for s in inv.sides if s in ("message", "condition")],  # type: ignore[misc]
        polarity=inv.polarity,  # type: ignore[arg-type]
        value=inv.value,
        condition=inv.condition,
        required=inv.required,
        type=d.type if d else None,
        default=d.default if d else None,
        choices=list(d.choices) if d and d.choices is not None else None,
        help=d.help if d else None,
        defined_at=f"{d.path}:{d.line}" if d else None,
        defined_url=_link(link_base, d.path, d.line) if d else None,
    )


# Bounds that keep the largest entry of a whole history under 100 KB of JSON; everything left
# out is counted in the entry and listed in full by `occurrence_page`.
SITES_LISTED = 40  # site histories listed (newest sites first)
SITES_IN_FULL = 5  # site histories with their line runs and code versions (newest sites first)
VERSIONS_SHOWN = 2  # code versions per such site
LINE_RUNS_SHOWN = 10  # line runs per such site (newest); other sites give their latest run
OCCURRENCES_SHOWN = 5  # the shown snapshot's occurrences in full
CHANGES_SHOWN = 12  # timeline changes listed; a long history lists moves, not line shifts
POINT_SITES = 60  # timeline points list their sites only while that many site strings or fewer


def build_entry(
    session: Session,
    error_id: str,
    *,
    snapshot: str | None = None,
    settings: Settings | None = None,
) -> Entry:
    """The full entry of one error; `snapshot` picks the occurrences shown in full."""
    error, repo = error_and_repo(session, error_id)
    snapshots = repo_snapshots(session, repo.id)
    slim = slim_occurrences(session, error_id)
    by_snap: dict[int, list[Any]] = {}
    for r in slim:
        by_snap.setdefault(r.snapshot_id, []).append(r)
    present = [s for s in snapshots if s.id in by_snap]
    if not present:
        raise NotFound(f"error {error_id} has no occurrence in any ingested snapshot")
    shown = present[-1]
    if snapshot is not None:
        shown = next((s for s in present if s.label == snapshot), None)  # type: ignore[assignment]
        if shown is None:
            labels = ", ".join(s.label for s in present)
            raise NotFound(
                f"error {error_id} is not raised in snapshot {snapshot!r} (raised in: {labels})"
            )
    shown_occs = occurrences_in(session, error_id, shown.id)

    links = merged_links(shown_occs)
    catalog = catalog_for(session, shown.id, {link.dest for link in links})

    def involvements(links: list[FlagLink]) -> list[Involvement]:
        return [Involvement.from_link(link, catalog.get(link.dest)) for link in links]

    bodies = site_bodies(session, {r.body_hash for r in slim})
    signatures = {h: signature_of(b.conditions or [], b.raise_source) for h, b in bodies.items()}
    tl = timeline_of(
        snapshots,
        {
            sid: [placement(r.path, r.line, r.qualname, signatures[r.body_hash]) for r in rows]
            for sid, rows in by_snap.items()
        },
    )
    site = site_of(error, shown_occs[0])
    ex = explanation_of(site, involvements(flag_links(shown_occs[0].flags)), tl, repo, snapshots)
    related = related_errors(
        session,
        error_id=error_id,
        repo_id=repo.id,
        message=error.message,
        snapshot_id=shown.id,
        sites=[(o.path, o.line, o.qualname) for o in shown_occs],
        flags={link.dest: link.flag for link in links},
    )
    base = settings.public_url.rstrip("/") if settings else ""
    position = {s.id: i for i, s in enumerate(snapshots)}
    histories = site_histories(
        [
            SlimOccurrence(
                position[r.snapshot_id], r.path, r.line, r.end_line, r.qualname, r.body_hash
            )
            for r in slim
        ]
    )
    return Entry(
        id=error.id,
        message=error.message,
        title=error.title,
        exception=error.exception,
        exception_chain=list(error.chain or builtin_chain(error.exception)),
        kind=error.kind,
        check=error.check_text,
        repo=RepoOut(name=repo.name, web_url=repo.web_url),
        template=[asdict(s) for s in site.template.segments],  # type: ignore[misc]
        form=error.form,
        snapshot=shown.label,
        explanation=ex,
        flags=[_flag_out(inv, shown.link_base) for inv in involvements(links)],
        sites=[
            history_out(
                h,
                snapshots,
                bodies,
                versions=VERSIONS_SHOWN if i < SITES_IN_FULL else 0,
                line_runs=LINE_RUNS_SHOWN if i < SITES_IN_FULL else 1,
            )
            for i, h in enumerate(histories[:SITES_LISTED])
        ],
        sites_total=len(histories),
        occurrences=[
            occurrence_out(error, o, shown, catalog) for o in shown_occs[:OCCURRENCES_SHOWN]
        ],
        occurrences_total=len(slim),
        occurrences_url=f"{base}/api/errors/{error.id}/occurrences",
        timeline=_timeline_out(tl),
        related=[
            RelatedOut(id=r.id, title=r.title, reason=r.reason, url=f"{base}/errors/{r.id}")
            for r in related
        ],
        provenance=[
            SnapshotProvenance(
                repo=repo.name,
                snapshot=s.label,
                kind=s.kind,
                commit=s.commit,
                date=s.date,
                url=s.link_base,
            )
            for s in dict.fromkeys((shown, present[0], present[-1]))
        ],
        ai=cached_explanation(session, error, settings),
        json_url=f"{base}/api/errors/{error.id}",
        page_url=f"{base}/errors/{error.id}",
    )


def _timeline_out(tl: TimelineFacts) -> Timeline:
    """The timeline as served: points list their sites and every change while that stays short."""
    # The points around the error's life: from the snapshot before it first appears to the one
    # after it last does (the summary names the gaps); the rest only say "not raised".
    present = [i for i, p in enumerate(tl.points) if p.present]
    points = tl.points[max(0, present[0] - 1) : present[-1] + 2]
    cheap = sum(len(p.sites) for p in points) <= POINT_SITES
    changes = list(tl.changes)
    if len(changes) > CHANGES_SHOWN:  # the line shifts are in the site histories already
        changes = [c for c in changes if c.kind != "line_changed"][:CHANGES_SHOWN]
    return Timeline(
        snapshots=[
            TimelinePointOut(
                snapshot=p.snapshot,
                date=p.date,
                present=p.present,
                site_count=len(p.sites),
                sites=list(p.sites) if cheap else [],
            )
            for p in points
        ],
        present_in=list(tl.present_in),
        first_seen=tl.first_seen,
        last_seen=tl.last_seen,
        gone_in=tl.gone_in,
        absent_before=tl.absent_before,
        changes=[asdict(c) for c in changes],  # type: ignore[misc]
        changes_total=len(tl.changes),
        introduced_in=tl.first_seen,
        removed_in=tl.gone_in,
        changed_in=[asdict(e) for e in tl.changed_in],  # type: ignore[misc]
        summary=tl.summary,
    )


# An occurrence page's cursor is the offset of its first row: ASCII digits, small enough for
# any database integer (declared in the OpenAPI document, so forged values never reach a query).
OCCURRENCE_CURSOR = r"^[0-9]{1,9}$"


def occurrence_page(
    session: Session,
    error_id: str,
    *,
    cursor: str | None,
    limit: int,
    settings: Settings | None = None,
) -> OccurrencePage:
    """One page of every occurrence of an error, newest snapshot first, then by path and line."""
    error, _ = error_and_repo(session, error_id)
    if cursor is not None and re.fullmatch(OCCURRENCE_CURSOR, cursor) is None:
        raise BadInput(f"cursor must be the next_cursor of a previous page, got {cursor!r}")
    offset = int(cursor or 0)
    total = occurrence_count(session, error_id)
    rows = occurrence_rows(session, error_id, offset, limit)
    nxt = offset + len(rows)
    more = nxt < total
    base = settings.public_url.rstrip("/") if settings else ""
    return OccurrencePage(
        items=[occurrence_out(error, occ, snap, {}) for occ, snap in rows],
        total=total,
        next_cursor=str(nxt) if more else None,
        next_url=f"{base}/api/errors/{error.id}/occurrences?cursor={nxt}&limit={limit}"
        if more
        else None,
    )


def occurrence_out(
    error: Error, occ: Occurrence, snap: Snapshot, catalog: dict[str, FlagDef]
) -> OccurrenceOut:
    """One stored occurrence as served, flag definitions taken from `catalog`."""
    site = site_of(error, occ)
    links = flag_links(occ.flags)
    return OccurrenceOut(
        snapshot=snap.label,
        snapshot_date=snap.date,
        path=occ.path,
        line=occ.line,
        end_line=occ.end_line,
        function=occ.qualname,
        conditions=conditions_out(site.conditions),
        snippet=asdict(site.snippet),  # type: ignore[arg-type]
        raise_source=occ.raise_source,
        url=pinned_url(snap, occ.path, occ.line, occ.end_line),
        flags=[
            _flag_out(Involvement.from_link(link, catalog.get(link.dest)), snap.link_base)
            for link in links
        ],
    )
