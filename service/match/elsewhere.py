"""Answers for errors the project's raises do not explain (see `raisers`).

- Raised by another package: only the matches the text itself shows (the message found, score
  at least `SHOWN`), failed imports, and those the project's last frame pins are kept; an entry
  of the project that merely reads alike is no answer to a transformers error.
- A KeyError, AttributeError or TypeError at a project line with no raise: the nearest entry of
  the same function (same file) is offered as a weak guess, with a note that the line itself has
  no entry, and every other match not pinned to that line is held below the match threshold.
"""

from __future__ import annotations

from dataclasses import replace

from errkb.service.match.import_text import IMPORT_CLASSES
from errkb.service.match.matcher import Match, MatchIndex
from errkb.service.match.matcher.index import FrameSite
from errkb.service.match.matcher.score import WEAK_BELOW
from errkb.service.match.raisers import Raiser, TextFrame

SHOWN = 0.8  # the message is in the text: kept whoever raised it (a validator's message)
NEAREST = round(WEAK_BELOW - 0.01, 2)  # the nearest entry: the best weak guess
HELD = round(WEAK_BELOW - 0.05, 2)  # others, when the line has no entry
_roots: dict[int, tuple[MatchIndex, frozenset[str]]] = {}


def roots_of(index: MatchIndex) -> frozenset[str]:
    """The project's top-level folders ("sglang"), over every entry (computed once per index)."""
    kept = _roots.get(id(index))
    if kept is None or kept[0] is not index:
        _roots.clear()
        kept = (index, frozenset(r for e in index.entries for r in e.roots))
        _roots[id(index)] = kept
    return kept[1]


def _pins(m: Match, frame: TextFrame) -> bool:
    """True when the match's site is the one this frame shows."""
    site = m.site
    if site is None or m.site_line is None:
        return False
    path = frame.path.replace("\\", "/")
    return m.site_line == frame.line and (
        path.endswith("/" + site.module_path) or path.endswith("/" + site.path)
    )


def outside_matches(matches: list[Match], raiser: Raiser) -> list[Match]:
    """The matches that still answer an error another package raised (a failed import is one:
    its library fails to load inside the package)."""
    frame = raiser.frame
    return [
        m
        for m in matches
        if m.score >= SHOWN
        or m.entry.exception in IMPORT_CLASSES
        or (frame is not None and _pins(m, frame))
    ]


def nearest_in_function(
    index: MatchIndex, matches: list[Match], frame: TextFrame, text: str
) -> tuple[list[Match], dict[str, str]]:
    """The matches for an implicit error at `frame`, and a note per entry id."""
    if any(_pins(m, frame) for m in matches):
        return matches, {}
    path = frame.path.replace("\\", "/")
    best: tuple[int, int, FrameSite] | None = None
    for e, entry in enumerate(index.entries):
        for s in entry.sites:
            if s.function != frame.function.split(".")[-1] or not (
                path.endswith("/" + s.module_path) or path.endswith("/" + s.path)
            ):
                continue
            distance = abs(s.line - frame.line)
            if best is None or distance < best[0]:
                best = (distance, e, s)
    held = [replace(m, score=min(m.score, HELD)) if not _pins(m, frame) else m for m in matches]
    if best is None:
        return held, {}
    _, e, site = best
    entry = index.entries[e]
    near = Match(
        entry=entry,
        score=NEAREST,
        start=frame.start,
        end=min(frame.end, len(text)),
        params={},
        site=site,
        site_line=site.line,
        snapshots=entry.snapshots,
        matched=0,
    )
    note = (
        f"Line {frame.line} of {frame.function} raises nothing that the knowledge base holds (the "
        f"error comes from Python itself, at a line with no raise or assert): this is the nearest "
        f"entry of {frame.function}, at line {site.line}, which may or may not be related."
    )
    return [near, *(m for m in held if m.entry.id != entry.id)], {entry.id: note}
