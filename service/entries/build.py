"""`build_entry`: the one function that assembles an error's full entry from the database.

The JSON route, the HTML page, `errkb show` and the static export all call it. It reads the
rows in a handful of queries (error, occurrences, snapshots, flag definitions, related-error
candidates, cached AI prose) and hands them to the pure synthesis in `ingest.knowledge`.
"""

from __future__ import annotations

from dataclasses import asdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from errkb.core.errors import NotFound
from errkb.core.models import Error, Occurrence, Repo, Snapshot
from errkb.core.records import FlagDef, FlagLink, flag_links
from errkb.core.settings import Settings
from errkb.knowledge.facts import Involvement, Placement
from errkb.service.entries.ai import cached_explanation
from errkb.service.entries.facts import (
    catalog_for,
    explanation_of,
    merged_links,
    site_of,
    timeline_of,
)
from errkb.service.entries.related import related_errors
from errkb.service.entries.schemas import (
    ConditionOut,
    Entry,
    FlagOut,
    OccurrenceOut,
    RelatedOut,
    RepoOut,
    SnapshotProvenance,
    Timeline,
)


def _url(link_base: str | None, path: str, line: int, end_line: int | None = None) -> str | None:
    if not link_base:
        return None
    span = f"#L{line}" + (f"-L{end_line}" if end_line and end_line != line else "")
    return f"{link_base}{path}{span}"


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
        defined_url=_url(link_base, d.path, d.line) if d else None,
    )


def build_entry(
    session: Session,
    error_id: str,
    *,
    snapshot: str | None = None,
    settings: Settings | None = None,
) -> Entry:
    """The full entry of one error; `snapshot` picks the occurrence shown first."""
    row = session.execute(
        select(Error, Repo).join(Repo, Repo.id == Error.repo_id).where(Error.id == error_id)
    ).first()
    if row is None:
        raise NotFound(f"no error with id {error_id!r}")
    error, repo = row
    snapshots = list(
        session.scalars(
            select(Snapshot)
            .where(Snapshot.repo_id == repo.id)
            .order_by(Snapshot.sort_key, Snapshot.id)
        )
    )
    occs = list(
        session.scalars(
            select(Occurrence)
            .where(Occurrence.error_id == error_id)
            .order_by(Occurrence.path, Occurrence.line)
        )
    )
    by_snap: dict[int, list[Occurrence]] = {}
    for occ in occs:
        by_snap.setdefault(occ.snapshot_id, []).append(occ)
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
    shown_occs = by_snap[shown.id]

    links = merged_links(shown_occs)
    catalog = catalog_for(session, shown.id, {link.dest for link in links})

    def involvements(links: list[FlagLink]) -> list[Involvement]:
        return [Involvement.from_link(link, catalog.get(link.dest)) for link in links]

    tl = timeline_of(
        snapshots,
        {sid: [Placement(o.path, o.line, o.qualname) for o in os_] for sid, os_ in by_snap.items()},
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
    snap_by_id = {s.id: s for s in snapshots}
    ordered = shown_occs + [o for s in reversed(present) if s.id != shown.id for o in by_snap[s.id]]
    return Entry(
        id=error.id,
        message=error.message,
        title=error.title,
        exception=error.exception,
        repo=RepoOut(name=repo.name, web_url=repo.web_url),
        template=[asdict(s) for s in site.template.segments],  # type: ignore[misc]
        form=error.form,
        snapshot=shown.label,
        explanation=ex,
        flags=[_flag_out(inv, shown.link_base) for inv in involvements(links)],
        # Definitions are read for the shown snapshot only; other snapshots' links stay bare.
        occurrences=[
            _occurrence_out(
                error, o, snap_by_id[o.snapshot_id], catalog if o.snapshot_id == shown.id else {}
            )
            for o in ordered
        ],
        timeline=Timeline(
            snapshots=[asdict(p) for p in tl.points],  # type: ignore[misc]
            present_in=list(tl.present_in),
            first_seen=tl.first_seen,
            last_seen=tl.last_seen,
            gone_in=tl.gone_in,
            absent_before=tl.absent_before,
            changes=[asdict(c) for c in tl.changes],  # type: ignore[misc]
            summary=tl.summary,
        ),
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
            for s in present
        ],
        ai=cached_explanation(session, error, settings),
        json_url=f"{base}/api/errors/{error.id}",
        page_url=f"{base}/errors/{error.id}",
    )


def _occurrence_out(
    error: Error, occ: Occurrence, snap: Snapshot, catalog: dict[str, FlagDef]
) -> OccurrenceOut:
    site = site_of(error, occ)
    links = flag_links(occ.flags)
    return OccurrenceOut(
        snapshot=snap.label,
        snapshot_date=snap.date,
        path=occ.path,
        line=occ.line,
        end_line=occ.end_line,
        function=occ.qualname,
        conditions=[
            ConditionOut(
                kind=c.kind,
                expr=c.expr,
                holds=c.holds,
                line=c.line,
                text=c.text,
                resolved=dict(c.resolved),
            )
            for c in site.conditions
        ],
        snippet=asdict(site.snippet),  # type: ignore[arg-type]
        raise_source=occ.raise_source,
        url=_url(snap.link_base, occ.path, occ.line, occ.end_line),
        flags=[
            _flag_out(Involvement.from_link(link, catalog.get(link.dest)), snap.link_base)
            for link in links
        ],
    )
