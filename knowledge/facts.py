"""The inputs and outputs of knowledge synthesis: small frozen records, no database types.

The service reads rows and hands them over as these records; synthesis returns the derived
fields as records too, each with its provenance, and the service turns them into the JSON schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from errkb.core.records import FlagDef, FlagLink, FlagSide, Polarity

Provenance = Literal[
    "derived:message",
    "derived:conditions",
    "derived:flags",
    "derived:history",
    "derived:glossary",
    "derived:comments",  # the comment lines above or beside the raise and its guards
    "derived:docstring",  # the enclosing function's docstring
    "ai",
]
FixKind = Literal[
    "report",
    "advice",
    "flag",
    "request_field",
    "environment",
    "model",
    "hardware",
    "upgrade",
    "downgrade",
    "condition",
]
ChangeKind = Literal["moved", "line_changed", "added_site", "removed_site"]
EventKind = Literal["message", "guard", "site added", "site removed"]


@dataclass(frozen=True)
class Involvement:
    """A flag linked to a site (see `errkb.ingest.flag_links`), with its definition if known."""

    flag: str
    dest: str
    sides: tuple[FlagSide, ...]
    polarity: Polarity | None = None
    value: str | None = None
    condition: str | None = None
    required: bool = False
    via: str | None = None
    cli: bool = True
    definition: FlagDef | None = None

    @classmethod
    def from_link(cls, link: FlagLink, definition: FlagDef | None) -> Involvement:
        """A site's link to a flag, with the flag's definition when it is known."""
        return cls(
            flag=link.flag,
            dest=link.dest,
            sides=link.sides,
            polarity=link.polarity,
            value=link.value,
            condition=link.condition,
            required=link.required,
            via=link.via,
            cli=link.cli and (definition is None or definition.cli),
            definition=definition,
        )

    @property
    def in_condition(self) -> bool:
        """True when a guard reads the flag."""
        return "condition" in self.sides and self.polarity is not None

    @property
    def in_message(self) -> bool:
        """True when the message names or prints the flag."""
        return "message" in self.sides


@dataclass(frozen=True)
class Placement:
    """Where one occurrence of the error is raised in a snapshot."""

    path: str
    line: int
    qualname: str = ""
    guard: str = ""  # the guard conditions as a comparable text (lines left out)
    message: str = ""  # the source of the message argument

    @property
    def site(self) -> str:
        """`path:line`."""
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class SnapshotSites:
    """One snapshot of the repo (ordered oldest first by the caller) and the error's sites there."""

    label: str
    date: datetime | None
    sites: tuple[Placement, ...]


@dataclass(frozen=True)
class Derived:
    """A derived sentence or paragraph with its sources."""

    text: str
    provenance: tuple[Provenance, ...]


@dataclass(frozen=True)
class DerivedItems:
    """Derived short sentences with their sources."""

    items: tuple[str, ...]
    provenance: tuple[Provenance, ...]


@dataclass(frozen=True)
class Fix:
    """One solution; `kind` is report | advice | flag | request_field | environment | model |
    upgrade | downgrade | condition (the generic one)."""

    kind: FixKind
    text: str
    provenance: tuple[Provenance, ...]
    flag: str | None = None
    command: str | None = None
    snapshot: str | None = None
    input: str | None = None  # the request field or environment variable to change
    url: str | None = None  # for a report: the project's new-issue page


@dataclass(frozen=True)
class ExampleFix:
    """A before/after command line: `before` reaches the guard, `after` does not."""

    before: str
    after: str
    note: str | None
    provenance: tuple[Provenance, ...]


@dataclass(frozen=True)
class Change:
    """A site that moved or changed line between two consecutive snapshots that raise it."""

    kind: ChangeKind
    from_snapshot: str
    to_snapshot: str
    from_site: str | None
    to_site: str | None
    text: str


@dataclass(frozen=True)
class ChangeEvent:
    """A snapshot where the error's code changed from the previous snapshot that raises it."""

    snapshot: str
    kinds: tuple[EventKind, ...]
    text: str


@dataclass(frozen=True)
class TimelinePoint:
    """One snapshot and whether it raises the error."""

    snapshot: str
    date: datetime | None
    present: bool
    sites: tuple[str, ...]


@dataclass(frozen=True)
class TimelineFacts:
    """The error across the ingested snapshots (oldest first)."""

    points: tuple[TimelinePoint, ...]
    present_in: tuple[str, ...]
    first_seen: str
    last_seen: str
    gone_in: str | None
    absent_before: str | None
    changes: tuple[Change, ...]
    summary: str
    changed_in: tuple[ChangeEvent, ...] = ()  # message or guard changes, sites added or removed
    # the error carrying the same check on in `gone_in` / `absent_before` (see `lineage`)
    successor: str | None = None
    predecessor: str | None = None


@dataclass(frozen=True)
class RelatedError:
    """A candidate related error and why."""

    id: str
    title: str
    reason: str  # the kind, for ranking: "same function", "shares --x", ...
    detail: str = ""  # the reason in words a reader can use (see `related.reason_words`)
