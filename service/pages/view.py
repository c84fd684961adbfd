"""What an entry page needs beyond the `Entry` itself: grouping, wording and highlighted code.

Pure functions from an `Entry` (`errkb.service.entries.schemas`) to small view records, so the
same page renders from the live service and in the static export without touching the database
again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup, escape

from errkb.service.entries.schemas import (
    Entry,
    FlagOut,
    LineOut,
    OccurrenceOut,
    Provenance,
    SiteHistoryOut,
    SiteVersionOut,
)
from errkb.service.pages.highlight import highlight_snippet

PROVENANCE_WORDS: dict[str, str] = {
    "derived:message": "the message text",
    "derived:conditions": "the guard conditions",
    "derived:flags": "the flag definitions",
    "derived:history": "the version history",
    "derived:glossary": "the project's glossary",
    "derived:comments": "the comments beside the code",
    "derived:docstring": "the function's docstring",
    "ai": "AI-assisted",
}

POLARITY_WORDS = {
    "on": "turned on",
    "off": "turned off or unset",
    "eq": "equal to {value}",
    "ne": "different from {value}",
    "in": "one of {value}",
    "not_in": "not one of {value}",
    "other": "read by the guard",
}


@dataclass(frozen=True)
class OccurrenceView:
    """One raise site with its highlighted snippet."""

    occ: OccurrenceOut
    code: Markup
    anchor: str


@dataclass(frozen=True)
class SnapshotGroup:
    """The occurrences of the error in one snapshot."""

    label: str
    date: datetime | None
    anchor: str
    selected: bool
    occurrences: list[OccurrenceView]
    more: list[OccurrenceOut]  # further sites, listed by location only (keeps pages small)


@dataclass(frozen=True)
class HistoryView:
    """One site history as a page shows it: a bounded summary, the newest code highlighted."""

    site: SiteHistoryOut
    anchor: str
    spans: str  # "0.4.0 to 0.5.23 (60 snapshots)", runs joined
    moves: list[LineOut]  # the newest line runs, at most LINE_RUNS_SHOWN
    earlier_moves: int  # line runs before those
    versions: list[SiteVersionOut]
    code: Markup | None  # the newest version's snippet, for the first few histories only


@dataclass(frozen=True)
class MessagePart:
    """A literal run of the message, or a placeholder shown as `{expr}`."""

    placeholder: bool
    text: str


def anchor_for(label: str) -> str:
    """A safe HTML id for a snapshot label."""
    return "snap-" + "".join(
        c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in label
    )


def message_parts(entry: Entry) -> list[MessagePart]:
    """The template as literal runs and `{expr!r:spec}` placeholders."""
    parts = []
    for seg in entry.template:
        if seg.kind == "text":
            parts.append(MessagePart(False, seg.text))
            continue
        conv = f"!{seg.conversion}" if seg.conversion else ""
        spec = f":{seg.format_spec}" if seg.format_spec else ""
        parts.append(MessagePart(True, "{" + seg.text + conv + spec + "}"))
    return parts


SITES_SHOWN = 6  # sites with a highlighted snippet in the shown snapshot
HISTORIES_WITH_CODE = 4  # site histories whose newest code is highlighted too
LINE_RUNS_SHOWN = 8  # line runs listed per site history


def snapshot_groups(entry: Entry) -> list[SnapshotGroup]:
    """The shown snapshot's occurrences (the entry lists only those; others are in `sites`)."""
    group = SnapshotGroup(
        label=entry.snapshot,
        date=entry.occurrences[0].snapshot_date if entry.occurrences else None,
        anchor=anchor_for(entry.snapshot),
        selected=True,
        occurrences=[],
        more=[],
    )
    for i, occ in enumerate(entry.occurrences):
        if len(group.occurrences) < SITES_SHOWN:
            code = highlight_snippet(occ.snippet)
            group.occurrences.append(OccurrenceView(occ, code, f"{group.anchor}-site-{i}"))
        else:
            group.more.append(occ)
    return [group]


def _span_text(site: SiteHistoryOut) -> str:
    def one(a: str, b: str, n: int) -> str:
        return a if n == 1 else f"{a} to {b} ({n} snapshots)"

    return ", ".join(one(s.from_snapshot, s.to_snapshot, s.snapshots) for s in site.spans)


def history_views(entry: Entry) -> list[HistoryView]:
    """Every site history, the first few with their newest code highlighted."""
    out = []
    for i, site in enumerate(entry.sites):
        code = None
        if i < HISTORIES_WITH_CODE and site.versions:
            code = highlight_snippet(site.versions[0].snippet)
        out.append(
            HistoryView(
                site=site,
                anchor=f"site-{i}",
                spans=_span_text(site),
                moves=site.lines[-LINE_RUNS_SHOWN:],
                earlier_moves=site.lines_total - len(site.lines[-LINE_RUNS_SHOWN:]),
                versions=site.versions,
                code=code,
            )
        )
    return out


def provenance_text(provenance: list[Provenance]) -> str:
    """`derived from the message text and the guard conditions`, or `AI-assisted`."""
    derived = [PROVENANCE_WORDS[p] for p in provenance if p != "ai"]
    out = []
    if derived:
        joined = (
            derived[0] if len(derived) == 1 else ", ".join(derived[:-1]) + " and " + derived[-1]
        )
        out.append("derived from " + joined)
    if "ai" in provenance:
        out.append("AI-assisted")
    return "; ".join(out)


def guard_needs(flag: FlagOut) -> str | None:
    """What the guard needs of a flag, in words; None when only the message names it."""
    if flag.polarity is None:
        return None
    return POLARITY_WORDS[flag.polarity].format(value=flag.value or "?")


def description(entry: Entry) -> str:
    """A meta description: exception, message and where it is raised, at most ~300 characters."""
    where = ""
    if entry.occurrences:
        occ = entry.occurrences[0]
        where = f" Raised in {occ.function} ({occ.path}:{occ.line}) in {entry.repo.name}."
    text = f"{entry.exception}: {' '.join(entry.message.split())}"
    if len(text) > 220:
        text = text[:219].rstrip() + "…"
    return text + where


def code_spans(text: str) -> Markup:
    """Escaped text whose `backticked` runs become <code>; an unpaired backtick stays literal."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # odd number of backticks: keep the last one as text
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    out = [
        Markup("<code>") + escape(part) + Markup("</code>") if i % 2 else _flags_as_code(part)
        for i, part in enumerate(parts)
    ]
    return Markup("").join(out)


# A space-separated word starting with `--`, without the punctuation that ends it (the shortest
# run followed only by `.,;:)` up to the word's end).
_FLAG_WORD = re.compile(r"(?:(?<= )|^)(--[^ ]*?)(?=[.,;:)]*(?: |\Z))")


def _flags_as_code(text: str) -> Markup:
    """Escaped text with `--flag` words in <code> (so a flag never breaks at its hyphens).

    One regular-expression pass over the text: escaping and joining it word by word was a fifth
    of the time a page took to render (profiled).
    """
    out: list[str] = []
    done = 0
    for found in _FLAG_WORD.finditer(text):
        flag = found.group(1)
        if len(flag) <= 2:  # a bare `--` is a dash, not a flag
            continue
        out.append(escape(text[done : found.start(1)]))
        out.append(f'<code class="flag">{escape(flag)}</code>')
        done = found.end(1)
    out.append(escape(text[done:]))
    return Markup("".join(out))
