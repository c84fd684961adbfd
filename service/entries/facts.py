"""Reading stored rows back as the records the knowledge synthesis works on.

`build_entry` (one error) and `snapshot_explanations` (every error of a release) both go through
these helpers, so an entry's explanation is the same whichever way it was read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from pydantic import TypeAdapter

from errkb.core.errors import NotFound
from errkb.core.flag_catalog import flag_catalog
from errkb.core.models import Error, Flag, Occurrence, Repo, Snapshot, unpacked_code
from errkb.core.origin import Origin
from errkb.core.records import (
    Condition,
    FlagDef,
    FlagLink,
    Segment,
    Site,
    SiteNotes,
    Snippet,
    Template,
    Vocabulary,
    flag_links,
)
from errkb.knowledge import explain_error
from errkb.knowledge.facts import Involvement, Placement, SnapshotSites, TimelineFacts
from errkb.knowledge.history.lineage import Kin
from errkb.knowledge.history.timeline import timeline as error_timeline
from errkb.service.entries.imports import import_explanation
from errkb.service.entries.lineage import Raised, function_name, kin_of, lineage_of, repo_error_kin
from errkb.service.entries.queries import (
    body_signature_rows,
    flags_of_files_defining,
    repo_placement_rows,
    repo_snapshots,
    snapshot_by_label,
    snapshot_flags,
    snapshot_occurrences_with_errors,
)
from errkb.service.entries.schemas import ExplanationOut
from errkb.service.queries import DbSession as Session

EVIDENCE_SHOWN = 6  # who hits it: the first chains of names (a loader's lookup had 15, 3.6 KB)
EVIDENCE_CHARS = 2_000  # and at most this many characters of them (the first chain always)
_CONDITIONS = TypeAdapter(tuple[Condition, ...])
_SEGMENTS = TypeAdapter(tuple[Segment, ...])
_NOTES = TypeAdapter(SiteNotes)


def site_of(error: Error, occ: Occurrence) -> Site:
    """The stored occurrence as the extractor's record."""
    snip = occ.snippet or {}
    return Site(
        exception=error.exception,
        template=Template(_SEGMENTS.validate_python(error.template), error.form),
        path=occ.path,
        line=occ.line,
        end_line=occ.end_line,
        qualname=occ.qualname,
        conditions=_CONDITIONS.validate_python(occ.conditions or []),
        snippet=Snippet(
            int(snip.get("start", occ.line)),
            tuple(snip.get("lines", ())),
            int(snip.get("raise_start", occ.line)),
            int(snip.get("raise_end", occ.end_line)),
        ),
        raise_source=occ.raise_source,
        notes=_NOTES.validate_python(snip.get("notes") or {}),
        kind=error.kind,
        check=error.check_text or "",
        origin=Origin.from_json(snip.get("origin")),
    )


def flag_def_of(row: Flag) -> FlagDef:
    """A stored flag row as the extractor's record."""
    return FlagDef(
        flags=tuple(row.flags or [row.name]),
        dest=row.dest,
        type=row.type,
        default=row.default,
        choices=tuple(row.choices) if row.choices is not None else None,
        help=row.help,
        path=row.path,
        line=row.line,
        origin="dataclass" if row.origin == "dataclass" else "argparse",
    )


def merged_links(occurrences: list[Occurrence]) -> list[FlagLink]:
    """One link per dest over a snapshot's occurrences (sides united, first polarity kept)."""
    merged: dict[str, FlagLink] = {}
    for occ in occurrences:
        for link in flag_links(occ.flags):
            known = merged.get(link.dest)
            merged[link.dest] = link if known is None else known.joined(link)
    return list(merged.values())


def catalog_for(session: Session, snapshot_id: int, dests: set[str]) -> dict[str, FlagDef]:
    """Definitions of `dests` in a snapshot, merged with the other flags of their files."""
    if not dests:
        return {}
    rows = flags_of_files_defining(session, snapshot_id, dests)
    merged = flag_catalog(flag_def_of(r) for r in rows)
    return {d: f for d, f in merged.items() if d in dests}


def explanation_of(
    site: Site, flags: list[Involvement], tl: TimelineFacts, repo: Repo, snapshots: list[Snapshot]
) -> ExplanationOut:
    """The derived prose of one site (shared by `build_entry` and `snapshot_explanations`)."""
    if site.kind == "import":  # a failed import: told from the release's requirements
        return import_explanation(site, flags, tl, repo, snapshots)
    ex = ExplanationOut.model_validate(
        asdict(
            explain_error(
                site,
                flags,
                tl,
                project=repo.pypi_name or repo.name.rsplit("/", 1)[-1],
                launch_command=repo.launch_command,
                releases={s.label for s in snapshots if s.kind == "pypi"},
                pypi_name=repo.pypi_name,
                vocabulary=Vocabulary.from_json(repo.vocabulary),
                web_url=repo.web_url,
            )
        )
    )
    who = ex.who_hits_it
    if who is not None:  # the first chains that fit, the rest counted
        kept: list[str] = []
        for chain in who.evidence[:EVIDENCE_SHOWN]:
            if kept and sum(map(len, kept)) + len(chain) > EVIDENCE_CHARS:
                break
            kept.append(chain)
        if len(kept) < len(who.evidence):
            who.evidence_total, who.evidence = len(who.evidence), kept
    return ex


Signature = tuple[str, str]  # a body's guard and message source, as the timeline compares them


def signature_of(conditions: list[dict[str, Any]], raise_source: str) -> Signature:
    """What makes a change of guard or message: the conditions without their lines, and the
    message argument's source."""
    guard = "\n".join(f"{c['kind']} {c['holds']} {c['expr']}" for c in conditions)
    return guard, raise_source


def body_signatures(session: Session, hashes: set[str] | None = None) -> dict[str, Signature]:
    """Signature per site body: of the given hashes, or of every body."""
    return {
        h: signature_of(unpacked_code(code)["conditions"], r)
        for h, code, r in body_signature_rows(session, hashes)
    }


def placement(path: str, line: int, qualname: str, signature: Signature) -> Placement:
    """An occurrence as the timeline sees it."""
    return Placement(path, line, qualname, guard=signature[0], message=signature[1])


def timeline_of(snapshots: list[Snapshot], by_snap: dict[int, list[Placement]]) -> TimelineFacts:
    """The error's timeline over the repo's snapshots, from its placements per snapshot id."""
    return error_timeline(
        [SnapshotSites(s.label, s.date, tuple(by_snap.get(s.id, ()))) for s in snapshots]
    )


def snapshot_explanations(session: Session, label: str) -> Iterator[tuple[Error, ExplanationOut]]:
    """The explanation of every error raised in a snapshot, as `build_entry` derives it.

    Reads everything in four queries instead of one `build_entry` per error, for checks and
    bulk exports over a whole release; related errors and the AI block are not included.
    """
    snap = snapshot_by_label(session, label)
    if snap is None:
        raise NotFound(f"no snapshot {label!r}")
    repo = session.get_one(Repo, snap.repo_id)
    snapshots = repo_snapshots(session, repo.id)
    placements: dict[str, dict[int, list[Placement]]] = {}
    signatures = body_signatures(session)
    # (snapshot, function name) -> (error id, path, qualname) of its occurrences
    at: dict[tuple[int, str], list[tuple[str, str, str]]] = {}
    for r in repo_placement_rows(session, repo.id):
        placements.setdefault(r.error_id, {}).setdefault(r.snapshot_id, []).append(
            placement(r.path, r.line, r.qualname, signatures[r.body_hash])
        )
        at.setdefault((r.snapshot_id, function_name(r.qualname)), []).append(
            (r.error_id, r.path, r.qualname)
        )
    kins = {r.id: kin_of(r) for r in repo_error_kin(session, repo.id)}

    def kins_of(ids: list[str]) -> dict[str, Kin]:
        return {i: kins[i] for i in ids}

    def raised_in(snapshot_ids: set[int], names: set[str]) -> list[Raised]:
        return [
            (sid, p, q, i)
            for sid in sorted(snapshot_ids)
            for n in sorted(names)
            for i, p, q in at.get((sid, n), ())
        ]

    catalog = flag_catalog(flag_def_of(r) for r in snapshot_flags(session, snap.id))
    rows = snapshot_occurrences_with_errors(session, snap.id)
    seen: set[str] = set()
    for occ, error in rows:
        if error.id in seen:
            continue  # the first occurrence (by path, line) is the one an entry shows
        seen.add(error.id)
        flags = [Involvement.from_link(x, catalog.get(x.dest)) for x in flag_links(occ.flags)]
        mine = placements[error.id]
        places = {sid: {(p.path, p.qualname) for p in ps} for sid, ps in mine.items()}
        tl = lineage_of(error, timeline_of(snapshots, mine), snapshots, places, raised_in, kins_of)
        yield error, explanation_of(site_of(error, occ), flags, tl, repo, snapshots)
