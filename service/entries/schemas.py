"""The public shape of an error entry: pydantic models served as JSON and rendered as pages.

One `Entry` is what `GET /api/errors/{id}`, the HTML page, `errkb show` and the static export all
show. Every explanatory field says where it came from (`provenance`), so a reader can tell a fact
read off the code or the version history from prose written by a model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from errkb.core.records import ConditionKind, FlagSide, Polarity, SegmentKind, SnapshotKind
from errkb.knowledge.facts import ChangeKind, EventKind, FixKind, Provenance
from errkb.knowledge.origins.inputs import InputKind
from errkb.knowledge.who.evidence import WhoKind as Audience
from errkb.knowledge.words.intent import Intent
from errkb.service.datetimes import UtcDatetime


class SegmentOut(BaseModel):
    """One piece of the message template: literal text or a placeholder's source expression."""

    kind: SegmentKind
    text: str
    conversion: str | None = None
    format_spec: str | None = None


class DerivedText(BaseModel):
    """A sentence or paragraph and the sources it was derived from."""

    text: str
    provenance: list[Provenance] = Field(min_length=1)


class DerivedList(BaseModel):
    """A list of short sentences and the sources they were derived from."""

    items: list[str]
    provenance: list[Provenance] = Field(min_length=1)


class Solution(BaseModel):
    """One way out, in the order a user should try them.

    `kind`: advice (the message's own words), flag (change an involved option), upgrade (a later
    snapshot no longer raises it), downgrade (an earlier one did not, i.e. a regression),
    condition (what must change when nothing concrete is known), report (an internal invariant:
    report it upstream), request_field, environment, model (the input of that kind to change).
    """

    kind: FixKind
    text: str
    flag: str | None = None  # "--enable-unified-memory"
    command: str | None = None  # command-line fragment, e.g. "--disaggregation-mode null"
    snapshot: str | None = None  # for upgrade/downgrade: the snapshot label to move to
    input: str | None = None  # request field or environment variable: "top_p", "SGLANG_X"
    url: str | None = None  # report: the project's new-issue page
    provenance: list[Provenance] = Field(min_length=1)


class ExampleFixOut(BaseModel):
    """A before/after command line (or request body): `before` reaches the guard, `after` not."""

    before: str
    after: str
    note: str | None = None
    provenance: list[Provenance] = Field(min_length=1)


class WhoHitsItOut(BaseModel):
    """Who is in a position to hit the error, and why that class."""

    kind: Audience
    text: str
    provenance: list[Provenance] = Field(min_length=1)
    evidence: list[str] = []  # each name the guard reads, traced to the input it comes from
    evidence_total: int = 0  # when the evidence is cut to its first few, how many there are
    inputs: list[str] = []  # by their user-facing names ("--page-size", "env: X"), its own first


class InputOut(BaseModel):
    """An input other than a flag that the guard or message involves."""

    kind: InputKind
    name: str
    owner: str = ""  # request class, or the config name it is read from
    default: str | None = None


class ExplanationOut(BaseModel):
    """Derived prose: what it means, when it happens, and how to get out of it."""

    what_it_means: DerivedText
    trigger: DerivedText
    common_situations: DerivedList
    solutions: list[Solution] = Field(min_length=1)
    example_fix: ExampleFixOut | None = None
    facts: DerivedList | None = None  # the guard, simplified, one fact per item, in words
    intent: Intent | None = None  # what kind of problem the message reports
    who_hits_it: WhoHitsItOut | None = None
    inputs: list[InputOut] = []  # request fields, environment variables, model settings


class FlagOut(BaseModel):
    """A command-line option involved in the error, with its definition in the shown snapshot."""

    flag: str  # primary flag "--enable-unified-memory"
    flags: list[str] = []  # every alias
    dest: str
    sides: list[FlagSide]  # where it shows: the message text, a guard condition, or both
    polarity: Polarity | None = None  # what the guard needs of it (None: message-only)
    value: str | None = None  # eq/ne/in/not_in: the compared value(s) as source text
    condition: str | None = None  # the guard condition text that reads it
    required: bool = False  # every way to the raise needs this flag test (changing it avoids it)
    type: str | None = None
    default: str | None = None
    choices: list[str] | None = None
    help: str | None = None
    defined_at: str | None = None  # "python/sglang/srt/server_args.py:812"
    defined_url: str | None = None


class ConditionOut(BaseModel):
    """One guard that must hold for control to reach the raise."""

    kind: ConditionKind
    expr: str
    holds: bool
    line: int
    text: str  # the condition as it must hold, e.g. `not (x is not None)`
    resolved: dict[str, str] = {}  # local name -> expression assigned to it


class SnippetOut(BaseModel):
    """Source lines around the raise."""

    start: int
    lines: list[str]
    raise_start: int
    raise_end: int


class OccurrenceOut(BaseModel):
    """One raise site of the error in one snapshot."""

    snapshot: str
    snapshot_date: UtcDatetime | None = None
    path: str
    line: int
    end_line: int
    function: str  # qualified name, "<module>" at top level
    conditions: list[ConditionOut]
    snippet: SnippetOut
    raise_source: str = ""
    url: str | None = None  # pinned to the snapshot, with #Lstart-Lend
    flags: list[FlagOut] = []


class SpanOut(BaseModel):
    """A run of consecutive ingested snapshots."""

    from_snapshot: str
    to_snapshot: str
    snapshots: int


class LineOut(BaseModel):
    """Where a site sits over a run of the snapshots that have it; a new run where it moved."""

    line: int
    end_line: int
    from_snapshot: str
    to_snapshot: str


class SiteVersionOut(BaseModel):
    """One distinct version of a site's code (conditions, snippet, message source), shown once.

    The snippet and condition lines are numbered as in `to_snapshot`, the newest that has it.
    """

    from_snapshot: str
    to_snapshot: str
    snapshots: int
    line: int  # in to_snapshot
    conditions: list[ConditionOut]
    snippet: SnippetOut
    raise_source: str = ""
    flags: list[str] = []  # primary flag names the site involves
    url: str | None = None  # pinned to to_snapshot


class SiteHistoryOut(BaseModel):
    """One raise site of the error across every snapshot that has it."""

    path: str
    function: str
    first_snapshot: str
    last_snapshot: str
    snapshots: int  # how many ingested snapshots have it
    spans: list[SpanOut]  # runs of consecutive snapshots (a gap: absent in between)
    lines: list[LineOut]  # the line in each run where it stayed put, oldest first (the newest)
    lines_total: int  # line runs in all; the older ones are in the occurrences
    versions: list[SiteVersionOut]  # newest first (for the newest few sites of a long list)
    versions_total: int  # distinct versions; the others are in the occurrences
    url: str | None = None  # pinned to last_snapshot


class TimelineRangeOut(BaseModel):
    """A run of consecutive snapshots raising the error (or not), with the last one's sites."""

    from_snapshot: str
    to_snapshot: str
    from_date: UtcDatetime | None = None
    to_date: UtcDatetime | None = None
    snapshots: int  # how many snapshots the run holds
    present: bool
    site_count: int = 0  # occurrences in to_snapshot
    sites: list[str] = []  # "path:line" of each occurrence in to_snapshot (empty when long)


class ChangeEventOut(BaseModel):
    """A snapshot where the error's code changed from the previous snapshot that raises it."""

    snapshot: str
    kinds: list[EventKind]
    text: str


class TimelineChange(BaseModel):
    """An occurrence that moved file or line between two consecutive snapshots where it exists."""

    kind: ChangeKind
    from_snapshot: str
    to_snapshot: str
    from_site: str | None = None  # "path:line"
    to_site: str | None = None
    text: str


class Timeline(BaseModel):
    """Where the error exists across the ingested snapshots (ordered oldest first)."""

    # Runs of snapshots from the one before first_seen to the one after last_seen, oldest first:
    # one item per run, not per snapshot, so an entry's size does not grow with its history.
    ranges: list[TimelineRangeOut]
    present_in: list[str]
    first_seen: str
    last_seen: str
    gone_in: str | None = None  # first snapshot after last_seen where it is no longer raised
    absent_before: str | None = None  # last snapshot before first_seen (a regression's origin)
    changes: list[TimelineChange] = []  # the newest, capped (line moves: sites[].lines)
    changes_total: int = 0
    introduced_in: str  # the first ingested snapshot that raises it
    removed_in: str | None = None  # the first one after the last that raises it
    changed_in: list[ChangeEventOut] = []  # the newest code changes, sites added or removed
    changed_in_total: int = 0
    # the error raising the same check in other words in gone_in / absent_before (no fix by version)
    carried_on_by: str | None = None
    carried_from: str | None = None
    summary: str
    provenance: list[Provenance] = ["derived:history"]


class RelatedOut(BaseModel):
    """A related error and why it is related."""

    id: str
    title: str
    reason: str  # "same function", "shares --tp-size", "same file", "same class", "similar message"
    why: str = ""  # the reason in words: "raised just before this one in the same function, …"
    url: str


class SnapshotProvenance(BaseModel):
    """One snapshot the entry was derived from: repo@label, its commit and date."""

    repo: str
    snapshot: str
    kind: SnapshotKind
    commit: str
    date: UtcDatetime | None = None
    url: str | None = None  # link base of the snapshot


class RepoOut(BaseModel):
    """The project the error belongs to."""

    name: str
    web_url: str | None = None


class AiExplanationOut(BaseModel):
    """Optional prose by a language model; never replaces the derived fields."""

    model: str
    created_at: UtcDatetime
    what_it_means: str
    trigger: str | None = None
    common_situations: list[str] = []
    solutions: list[str] = []
    provenance: Literal["ai"] = "ai"


class Entry(BaseModel):
    """Everything known about one error: the unit of the JSON API and of each page."""

    id: str
    message: str  # display form, placeholders shown as {expr}
    title: str
    exception: str
    # The class and its bases, nearest first, as far as the code and Python's builtins tell
    # (["FooError", "ValueError", "Exception", "BaseException"]).
    exception_chain: list[str] = []
    # How it is raised: "raise", "indirect" (class known at run time), "assert", "lookup"
    # (a missing key); `check` is what must hold: the assert's condition, the subscript.
    kind: str = "raise"
    check: str | None = None
    # Every site is in the project's own tests (`tests/`, `test_*.py`, a conftest): code a
    # server never runs. Matches and searches rank such errors below the rest.
    test_code: bool = False
    repo: RepoOut
    template: list[SegmentOut]
    form: str
    snapshot: str  # the snapshot whose occurrence is shown first
    explanation: ExplanationOut
    flags: list[FlagOut]  # involvements in the shown snapshot (union over its occurrences)
    sites: list[SiteHistoryOut]  # the raise sites across the history, newest first (capped)
    sites_total: int  # every site; those not listed are in the occurrences
    occurrences: list[OccurrenceOut]  # the shown snapshot's (the first few); all: occurrences_url
    occurrences_total: int  # occurrences in every snapshot (one per snapshot per site)
    occurrences_url: str  # all of them, paginated: GET ...?cursor=
    timeline: Timeline
    related: list[RelatedOut] = Field(max_length=8)
    provenance: list[SnapshotProvenance]  # the shown snapshot, and the first and last raising it
    ai: AiExplanationOut | None = None
    json_url: str
    page_url: str


class OccurrencePage(BaseModel):
    """One page of an error's occurrences, newest snapshot first."""

    items: list[OccurrenceOut]
    total: int
    next_cursor: str | None = None
    next_url: str | None = None
