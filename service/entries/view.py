"""What an entry page needs beyond the `Entry` itself: grouping, wording and highlighted code.

Pure functions from `service.schemas.Entry` to small view records, so the same page renders
from the live service and in the static export without touching the database again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup, escape

from errkb.service.entries.schemas import Entry, FlagOut, OccurrenceOut, Provenance
from errkb.service.pages.highlight import highlight_snippet

PROVENANCE_WORDS: dict[str, str] = {
    "derived:message": "the message text",
    "derived:conditions": "the guard conditions",
    "derived:flags": "the flag definitions",
    "derived:history": "the version history",
    "derived:glossary": "the project's glossary",
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
SITES_SHOWN_OTHER = 2  # ... and in each other snapshot


def snapshot_groups(entry: Entry) -> list[SnapshotGroup]:
    """Occurrences grouped by snapshot: the shown snapshot first, then as the entry orders them."""
    groups: dict[str, SnapshotGroup] = {}
    for i, occ in enumerate(entry.occurrences):
        group = groups.get(occ.snapshot)
        if group is None:
            group = SnapshotGroup(
                label=occ.snapshot,
                date=occ.snapshot_date,
                anchor=anchor_for(occ.snapshot),
                selected=occ.snapshot == entry.snapshot,
                occurrences=[],
                more=[],
            )
            groups[occ.snapshot] = group
        shown = SITES_SHOWN if group.selected else SITES_SHOWN_OTHER
        if len(group.occurrences) < shown:
            code = highlight_snippet(occ.snippet)
            group.occurrences.append(OccurrenceView(occ, code, f"{group.anchor}-site-{i}"))
        else:
            group.more.append(occ)
    return sorted(groups.values(), key=lambda g: not g.selected)  # stable: keeps entry order


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


def _flags_as_code(text: str) -> Markup:
    """Escaped text with `--flag` words in <code> (so a flag never breaks at its hyphens)."""
    words = []
    for word in text.split(" "):
        core = word.rstrip(".,;:)")
        if core.startswith("--") and len(core) > 2:
            tail = word[len(core) :]
            words.append(Markup('<code class="flag">') + escape(core) + Markup("</code>") + tail)
        else:
            words.append(escape(word))
    return Markup(" ").join(words)
