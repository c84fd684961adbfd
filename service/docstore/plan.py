"""Which entry docs a build must make: those whose inputs hash moved, and no others.

The plan reads every error, occurrence and snapshot once, hashes each error's own inputs
(`inputs.own_inputs`), and compares them with the hash stored with its doc. A doc whose
inputs held is kept (and made current under the new content key), unless a new error may join
its similar-message related errors (`inputs.neighbours_of_new`).

A doc that is out of date but whose stable inputs held (`inputs.stable_inputs`: the new release
raises its error from the same code in the same functions, so only its versions and perhaps its
line numbers moved), and a held doc that a new error may join, are planned `later`: never served
as they are, but a build may leave them to their first request or to a background build, and
rebuild at once only the new docs and those whose content moved. Adding sglang 0.5.23 to the
150 releases before it: 6,505 docs at once (3,766 new errors, 2,739 whose code, place or
presence changed), 22,864 later, 3,876 kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby

from errkb.service.docstore.inputs import (
    Timeline,
    doc_inputs,
    neighbours_of_new,
    own_inputs,
    related_ids,
    repo_digest,
    stable_inputs,
)
from errkb.service.docstore.queries import (
    error_rows,
    error_titles,
    max_snapshot_id,
    meta_value,
    occurrence_rows_by_error,
    repo_rows,
    snapshots_by_repo,
    stored_docs,
)
from errkb.service.queries import DbSession

CHECKED = "entry_docs_checked"  # meta: the newest snapshot id the kept docs were checked against


@dataclass
class DocPlan:
    """What one build does, by error id."""

    own: dict[str, str]  # own inputs hash of every error that has an entry
    rebuild: list[str]  # docs to build: new, changed, or of other settings
    keep: list[str]  # docs whose inputs held
    drop: list[str]  # docs of errors that have no entry any more
    titles: dict[str, str]  # every error's title (for the related errors' part of the hash)
    newest_snapshot: int = 0
    new_neighbours: int = 0  # held docs not kept because a new error may join their related
    first_seen: dict[str, int] = field(default_factory=dict)
    stable: dict[str, str] = field(default_factory=dict)  # stable inputs hash, per error
    later: list[str] = field(default_factory=list)  # out of date only by their version lists
    # kept docs whose stored stable hash is missing (built before it existed) or other: to set
    restable: dict[str, str] = field(default_factory=dict)
    # held docs a new error may change: their inputs hash is forgotten, so that no later plan
    # (whose new errors are newer still) keeps them before they are built again
    unheld: list[str] = field(default_factory=list)


def _own_hashes(
    session: DbSession, variant: str
) -> tuple[dict[str, str], dict[str, str], dict[str, int]]:
    """Own and stable inputs hashes and first snapshot id of every error with an occurrence."""
    errors = {e.id: e for e in error_rows(session)}
    repos = {i: repo_digest(r) for i, r in repo_rows(session).items()}
    timelines = {r: Timeline(snaps) for r, snaps in snapshots_by_repo(session).items()}
    own: dict[str, str] = {}
    stable: dict[str, str] = {}
    first: dict[str, int] = {}
    for error_id, rows in groupby(occurrence_rows_by_error(session), key=lambda r: r.error_id):
        occs = list(rows)
        e = errors[error_id]
        parts = (e, repos[e.repo_id], occs, timelines[e.repo_id], variant)
        own[error_id] = own_inputs(*parts)
        stable[error_id] = stable_inputs(*parts)
        first[error_id] = min(o.snapshot_id for o in occs)
    return own, stable, first


def plan_docs(session: DbSession, variant: str, *, force: bool = False) -> DocPlan:
    """The plan of a build with settings `variant` (`force`: rebuild every doc)."""
    newest = max_snapshot_id(session)
    own, stable, first = _own_hashes(session, variant)
    titles = error_titles(session)
    stored = stored_docs(session)
    by_state: dict[str, list[str]] = {"rebuild": [], "keep": [], "later": []}
    restable: dict[str, str] = {}
    for error_id in sorted(own):
        doc = stored.get(error_id)
        state = "rebuild"
        if not force and doc is not None and doc.variant == variant:
            related = related_ids(doc.related)
            if doc.inputs == doc_inputs(own[error_id], related, titles):
                state = "keep"
                if doc.stable != (held := doc_inputs(stable[error_id], related, titles)):
                    restable[error_id] = held
            elif doc.stable == doc_inputs(stable[error_id], related, titles):
                state = "later"
        by_state[state].append(error_id)
    rebuild, keep, later = by_state["rebuild"], by_state["keep"], by_state["later"]
    drop = sorted(set(stored) - set(own))
    checked = int(meta_value(session, CHECKED) or 0)
    new = [i for i in own if i not in stored or first[i] > checked]
    plan = DocPlan(own, rebuild, keep, drop, titles, newest, 0, first, stable, later, restable)
    if keep and new:  # a new error may join the similar errors of a doc that held: not kept
        messages = {e.id: e.message for e in error_rows(session)}
        moved = neighbours_of_new({i: messages[i] for i in keep}, messages, set(new))
        plan.keep = [i for i in keep if i not in moved]
        plan.later = sorted(later + list(moved))
        plan.new_neighbours = len(moved)
        plan.unheld = sorted(moved)
    return plan


def entry_own_inputs(session: DbSession, error_id: str, variant: str) -> tuple[str, str]:
    """The own and stable inputs hashes of one error, as `plan_docs` computes them for all."""
    (error,) = error_rows(session, error_id)
    repo = repo_digest(repo_rows(session)[error.repo_id])
    timeline = Timeline(snapshots_by_repo(session)[error.repo_id])
    occurrences = list(occurrence_rows_by_error(session, error_id))
    parts = (error, repo, occurrences, timeline, variant)
    return own_inputs(*parts), stable_inputs(*parts)
