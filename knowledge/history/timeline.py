"""The error's history: which ingested snapshots raise it, when it appeared and disappeared.

Turns "wait for a release that implements it" into a fact ("not raised since 0.5.20"), and shows
occurrences that moved file or line between consecutive snapshots that raise the error. Over a
whole ingested history it is exact: introduced in the first snapshot that raises it, removed in
the first one after the last that does, and changed (message or guard) where a site's code did.
"""

from __future__ import annotations

from collections.abc import Sequence

from errkb.knowledge.facts import (
    Change,
    ChangeEvent,
    EventKind,
    Placement,
    SnapshotSites,
    TimelineFacts,
    TimelinePoint,
)


def _pairs(
    old: tuple[Placement, ...], new: tuple[Placement, ...]
) -> list[tuple[Placement | None, Placement | None]]:
    """Occurrences of two snapshots matched up: same function first, then same file, in order."""
    left, right = (
        sorted(old, key=lambda p: (p.path, p.line)),
        sorted(new, key=lambda p: (p.path, p.line)),
    )
    pairs: list[tuple[Placement | None, Placement | None]] = []
    for same in (
        lambda a, b: a.path == b.path and a.qualname == b.qualname,
        lambda a, b: a.path == b.path,
        lambda a, b: a.qualname == b.qualname,
        lambda a, b: True,
    ):
        for a in list(left):
            b = next((b for b in right if same(a, b)), None)
            if b is not None:
                pairs.append((a, b))
                left.remove(a)
                right.remove(b)
    pairs += [(a, None) for a in left] + [(None, b) for b in right]
    return pairs


def changes_between(before: SnapshotSites, after: SnapshotSites) -> list[Change]:
    """Moves, line changes, added and removed sites from one snapshot to the next."""
    out = []
    for a, b in _pairs(before.sites, after.sites):
        ctx = (before.label, after.label)
        if a is not None and b is not None:
            if a.path != b.path:
                out.append(
                    Change(
                        "moved",
                        *ctx,
                        a.site,
                        b.site,
                        f"moved from {a.site} to {b.site} in {after.label}",
                    )
                )
            elif a.line != b.line:
                out.append(
                    Change(
                        "line_changed",
                        *ctx,
                        a.site,
                        b.site,
                        f"{a.path} line {a.line} -> {b.line} in {after.label}",
                    )
                )
        elif b is not None:
            out.append(
                Change(
                    "added_site", *ctx, None, b.site, f"also raised at {b.site} from {after.label}"
                )
            )
        elif a is not None:
            out.append(
                Change(
                    "removed_site",
                    *ctx,
                    a.site,
                    None,
                    f"no longer raised at {a.site} in {after.label}",
                )
            )
    return out


def change_event(before: SnapshotSites, after: SnapshotSites) -> ChangeEvent | None:
    """What changed in the error's code from one snapshot that raises it to the next, if any."""
    kinds: dict[EventKind, list[str]] = {}
    for a, b in _pairs(before.sites, after.sites):
        if a is not None and b is not None:
            if a.message != b.message:
                kinds.setdefault("message", []).append(
                    f"the message at {b.site} now reads `{' '.join(b.message.split())[:160]}`"
                )
            if a.guard != b.guard:
                kinds.setdefault("guard", []).append(f"the guard at {b.site} changed")
        elif b is not None:
            kinds.setdefault("site added", []).append(f"also raised at {b.site}")
        elif a is not None:
            kinds.setdefault("site removed", []).append(f"no longer raised at {a.site}")
    if not kinds:
        return None
    text = "; ".join(x for notes in kinds.values() for x in notes[:3])
    return ChangeEvent(after.label, tuple(kinds), f"In {after.label}: {text}.")


def _span(labels: Sequence[str]) -> str:
    if len(labels) == 1:
        return labels[0]
    if len(labels) == 2:
        return f"{labels[0]} and {labels[1]}"
    return f"{labels[0]} to {labels[-1]} ({len(labels)} snapshots)"


def timeline(history: Sequence[SnapshotSites]) -> TimelineFacts:
    """The timeline of one error over the repo's snapshots (ordered oldest first by the caller)."""
    present = [h for h in history if h.sites]
    if not present:
        raise ValueError("the error occurs in none of the given snapshots")
    labels = [h.label for h in history]
    first, last = labels.index(present[0].label), labels.index(present[-1].label)
    gone_in = labels[last + 1] if last + 1 < len(labels) else None
    absent_before = labels[first - 1] if first > 0 else None
    gaps = [h.label for h in history[first : last + 1] if not h.sites]
    changes: list[Change] = []
    events: list[ChangeEvent] = []
    for before, after in zip(present, present[1:], strict=False):
        changes += changes_between(before, after)
        if (event := change_event(before, after)) is not None:
            events.append(event)

    names = [h.label for h in present]
    parts = [f"Raised in {_span(names) if not gaps else ', '.join(names)}"]
    if gaps:
        parts.append(f"absent in {', '.join(gaps)} in between")
    parts.append(f"first seen {names[0]}, last seen {names[-1]}")
    if gone_in is not None:
        parts.append(f"not raised since {gone_in}")
    else:
        parts.append(f"still raised in the latest ingested snapshot ({labels[-1]})")
    if absent_before is not None:
        # the releases between the two were not necessarily ingested: bound the claim by both
        parts.append(f"appeared between {absent_before} (absent) and {names[0]}")
    moved = sum(c.kind == "moved" for c in changes)
    if moved:
        parts.append(f"moved file {moved} time{'s' if moved > 1 else ''}")
    edited = [e.snapshot for e in events if {"message", "guard"} & set(e.kinds)]
    if edited:
        parts.append(f"message or guard changed in {_list(edited)}")
    return TimelineFacts(
        points=tuple(
            TimelinePoint(h.label, h.date, bool(h.sites), tuple(p.site for p in h.sites))
            for h in history
        ),
        present_in=tuple(names),
        first_seen=names[0],
        last_seen=names[-1],
        gone_in=gone_in,
        absent_before=absent_before,
        changes=tuple(changes),
        summary="; ".join(parts) + ".",
        changed_in=tuple(events),
    )


def _list(labels: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")
