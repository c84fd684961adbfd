"""`build_entry`: the one function that assembles an error's full entry from the database.

The read side (`errkb.service.read.entries`) calls it for every front end when no stored doc is
current, and the entry docs are built with it. It reads the rows in a handful of queries (error,
occurrences, snapshots, flag definitions, related-error candidates, cached AI prose) and hands
them to the pure synthesis in `errkb.knowledge`.

An entry stays small whatever the history: its places are site histories (each distinct
version of a site's code once), only the shown snapshot's occurrences are listed in full, and
the per-snapshot list is paginated (`errkb.service.entries.occurrences`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from typing import Any, TypeVar

from errkb.core.builtin_classes import builtin_chain
from errkb.core.errors import NotFound
from errkb.core.models import SiteBody, Snapshot
from errkb.core.records import FlagLink, flag_links
from errkb.core.settings import Settings
from errkb.knowledge.facts import Involvement, TimelineFacts
from errkb.knowledge.history.lineage import Kin
from errkb.knowledge.who.evidence import in_test_code
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
from errkb.service.entries.histories import SiteHistory, SlimOccurrence, site_histories
from errkb.service.entries.history_out import history_out
from errkb.service.entries.lineage import (
    Raised,
    error_kin,
    kin_of,
    lineage_of,
    same_function_errors,
)
from errkb.service.entries.occurrences import flag_out, occurrence_out
from errkb.service.entries.queries import (
    error_and_repo,
    occurrences_in,
    repo_snapshots,
    site_bodies,
    slim_occurrences,
)
from errkb.service.entries.related import related_errors
from errkb.service.entries.schemas import (
    Entry,
    OccurrenceOut,
    RelatedOut,
    RepoOut,
    SiteHistoryOut,
    SnapshotProvenance,
    Timeline,
    TimelineRangeOut,
)
from errkb.service.queries import DbSession as Session

T = TypeVar("T")

# Bounds that keep the largest entry of a whole history (151 sglang releases) within 20 KB of
# JSON, whatever its length; everything left out is counted in the entry and listed in full by
# `occurrences.occurrence_page`. An entry grows by a release's label, not by its history.
SITES_LISTED = 6  # site histories listed (newest sites first)
SITES_IN_FULL = 3  # site histories with their line runs and code versions (newest sites first)
VERSIONS_SHOWN = 2  # code versions per such site
LINE_RUNS_SHOWN = 3  # line runs per such site (newest); other sites give their latest run
OCCURRENCES_SHOWN = 3  # the shown snapshot's occurrences in full
# Source lines (snippets) an entry carries: the shown snapshot's occurrences first (the first one
# always), then the newest sites' code versions. A lookup deep in a loader shows 64 lines a
# snippet, and its three sites with two versions each were 50 KB of one entry's JSON.
CODE_LINES = 48
CHANGES_SHOWN = 3  # timeline changes listed (the newest); a long history lists moves only
CHANGED_IN_SHOWN = 3  # code change events listed (the newest)
POINT_SITES = 12  # timeline ranges list their sites only while that many site strings or fewer


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
    shown = _shown_snapshot(error_id, present, snapshot)
    shown_occs = occurrences_in(session, error_id, shown.id)

    links = merged_links(shown_occs)
    catalog = catalog_for(session, shown.id, {link.dest for link in links})

    def involvements(links: list[FlagLink]) -> list[Involvement]:
        return [Involvement.from_link(link, catalog.get(link.dest)) for link in links]

    bodies = site_bodies(session, {r.body_hash for r in slim})
    tl = _timeline_facts(snapshots, by_snap, bodies)
    places = {sid: {(r.path, r.qualname) for r in rows} for sid, rows in by_snap.items()}
    tl = lineage_of(
        error, tl, snapshots, places, partial(_raised_in, session), partial(_kins, session)
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
    histories = _site_histories(snapshots, slim)
    in_full = _fitting(shown_occs[:OCCURRENCES_SHOWN], CODE_LINES, _snippet_lines)
    code_left = CODE_LINES - sum(_snippet_lines(o) for o in in_full)
    shown_code = {(o.path, o.line, shown.label) for o in in_full}
    return Entry(
        id=error.id,
        message=error.message,
        title=error.title,
        exception=error.exception,
        exception_chain=list(error.chain or builtin_chain(error.exception)),
        kind=error.kind,
        check=error.check_text,
        test_code=bool(slim) and all(in_test_code(p) for p in {r.path for r in slim}),
        repo=RepoOut(name=repo.name, web_url=repo.web_url),
        template=[asdict(s) for s in site.template.segments],  # type: ignore[misc]
        form=error.form,
        snapshot=shown.label,
        explanation=ex,
        flags=[flag_out(inv, shown.link_base) for inv in involvements(links)],
        sites=_sites_out(histories, snapshots, bodies, code_left, shown_code),
        sites_total=len(histories),
        occurrences=[_within(occurrence_out(error, o, shown, catalog)) for o in in_full],
        occurrences_total=len(slim),
        occurrences_url=f"{base}/api/errors/{error.id}/occurrences",
        timeline=_timeline_out(tl),
        related=[
            RelatedOut(
                id=r.id, title=r.title, reason=r.reason, why=r.detail, url=f"{base}/errors/{r.id}"
            )
            for r in related
        ],
        provenance=_provenance(repo.name, [shown, present[0], present[-1]]),
        ai=cached_explanation(session, error, settings),
        json_url=f"{base}/api/errors/{error.id}",
        page_url=f"{base}/errors/{error.id}",
    )


def _shown_snapshot(error_id: str, present: list[Snapshot], label: str | None) -> Snapshot:
    """The snapshot whose occurrences the entry shows in full: `label`'s, else the newest."""
    if not present:
        raise NotFound(f"error {error_id} has no occurrence in any ingested snapshot")
    if label is None:
        return present[-1]
    shown = next((s for s in present if s.label == label), None)
    if shown is None:
        labels = ", ".join(s.label for s in present)
        raise NotFound(
            f"error {error_id} is not raised in snapshot {label!r} (raised in: {labels})"
        )
    return shown


def _site_histories(snapshots: list[Snapshot], slim: list[Any]) -> list[SiteHistory]:
    """The error's sites, each with the snapshots and code versions it was seen in."""
    position = {s.id: i for i, s in enumerate(snapshots)}
    return site_histories(
        [
            SlimOccurrence(
                position[r.snapshot_id], r.path, r.line, r.end_line, r.qualname, r.body_hash
            )
            for r in slim
        ]
    )


def _sites_out(
    histories: list[SiteHistory],
    snapshots: list[Snapshot],
    bodies: dict[str, SiteBody],
    code_lines: int,
    in_full: set[tuple[str, int, str]] = frozenset(),  # type: ignore[assignment]
) -> list[SiteHistoryOut]:
    """The newest sites as served: the first few in full (their code versions while they fit
    in `code_lines`, the newest site's newest version always unless an occurrence shown in full,
    `in_full` (path, line, snapshot), already carries that code), the rest with their latest
    line run."""
    out = []
    for i, h in enumerate(histories[:SITES_LISTED]):
        site = history_out(
            h,
            snapshots,
            bodies,
            versions=VERSIONS_SHOWN if i < SITES_IN_FULL else 0,
            line_runs=LINE_RUNS_SHOWN if i < SITES_IN_FULL else 1,
        )
        # the newest site keeps its newest code version, whatever the budget, unless the entry
        # already shows that code in full (the same place in the same snapshot)
        shown = bool(site.versions) and (
            (h.path, site.versions[0].line, site.versions[0].to_snapshot) in in_full
        )
        least = 1 if i == 0 and not shown else 0
        site.versions = _fitting(site.versions, code_lines, lambda v: len(v.snippet.lines), least)
        code_lines -= sum(len(v.snippet.lines) for v in site.versions)
        out.append(site)
    return out


def _within(occurrence: OccurrenceOut) -> OccurrenceOut:
    """The occurrence with at most `CODE_LINES` source lines: those that end at the raise, the
    statement itself kept whole (the full source is a link away)."""
    snippet = occurrence.snippet
    if len(snippet.lines) <= CODE_LINES:
        return occurrence
    first = max(
        0,
        min(
            snippet.raise_start - snippet.start, snippet.raise_end - snippet.start + 1 - CODE_LINES
        ),
    )
    lines = snippet.lines[
        first : first + max(CODE_LINES, snippet.raise_end - snippet.raise_start + 1)
    ]
    trimmed = snippet.model_copy(update={"start": snippet.start + first, "lines": lines})
    return occurrence.model_copy(update={"snippet": trimmed})


def _snippet_lines(occurrence: Any) -> int:
    return len(occurrence.snippet.get("lines", ()))


def _fitting(items: Sequence[T], budget: int, size: Callable[[T], int], least: int = 1) -> list[T]:
    """The first items whose sizes add up to at most `budget`, and at least the first `least`."""
    kept: list[T] = []
    for item in items:
        budget -= size(item)
        if budget < 0 and len(kept) >= least:
            break
        kept.append(item)
    return kept


def _provenance(repo: str, snapshots: list[Snapshot]) -> list[SnapshotProvenance]:
    """Where the entry's facts come from: each distinct snapshot once, in the order given."""
    return [
        SnapshotProvenance(
            repo=repo, snapshot=s.label, kind=s.kind, commit=s.commit, date=s.date, url=s.link_base
        )
        for s in dict.fromkeys(snapshots)
    ]


def _raised_in(session: Session, snapshot_ids: set[int], names: set[str]) -> list[Raised]:
    """The errors raised in the snapshots by functions of those names (see `lineage_of`)."""
    return same_function_errors(session, snapshot_ids, names)


def _kins(session: Session, ids: list[str]) -> dict[str, Kin]:
    """The errors of these ids, as the lineage compares them."""
    return {r.id: kin_of(r) for r in error_kin(session, ids)}


def _timeline_facts(
    snapshots: list[Snapshot], by_snap: dict[int, list[Any]], bodies: dict[str, Any]
) -> TimelineFacts:
    """Where the error stands in each snapshot, each site placed by its code's signature."""
    signatures = {h: signature_of(b.conditions or [], b.raise_source) for h, b in bodies.items()}
    return timeline_of(
        snapshots,
        {
            sid: [placement(r.path, r.line, r.qualname, signatures[r.body_hash]) for r in rows]
            for sid, rows in by_snap.items()
        },
    )


def _timeline_out(tl: TimelineFacts) -> Timeline:
    """The timeline as served: runs of snapshots alike (raised or not), each with its last
    snapshot's sites, and the newest changes (all of them while they are few)."""
    # The points around the error's life: from the snapshot before it first appears to the one
    # after it last does (the summary names the gaps); the rest only say "not raised".
    present = [i for i, p in enumerate(tl.points) if p.present]
    points = tl.points[max(0, present[0] - 1) : present[-1] + 2]
    changes = list(tl.changes)
    if len(changes) > CHANGES_SHOWN:  # the line shifts are in the site histories already
        changes = [c for c in changes if c.kind != "line_changed"][-CHANGES_SHOWN:]
    # A run breaks where the error comes or goes, not where its number of sites changes: an
    # import error gains a site in most releases, and a run per release is what ranges replaced.
    runs: list[list[Any]] = []
    for p in points:
        if runs and runs[-1][-1].present == p.present:
            runs[-1].append(p)
        else:
            runs.append([p])
    cheap = sum(len(run[-1].sites) for run in runs) <= POINT_SITES
    return Timeline(
        ranges=[
            TimelineRangeOut(
                from_snapshot=run[0].snapshot,
                to_snapshot=run[-1].snapshot,
                from_date=run[0].date,
                to_date=run[-1].date,
                snapshots=len(run),
                present=run[-1].present,
                site_count=len(run[-1].sites),
                sites=list(run[-1].sites) if cheap else [],
            )
            for run in runs
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
        carried_on_by=tl.successor,
        carried_from=tl.predecessor,
        changed_in=[asdict(e) for e in tl.changed_in[-CHANGED_IN_SHOWN:]],  # type: ignore[misc]
        changed_in_total=len(tl.changed_in),
        summary=tl.summary,
    )
