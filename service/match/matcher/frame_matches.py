"""Matches found from a traceback frame alone, when the message is missing or cut too short.

The innermost frame of a traceback names the file and line that raised. When that line is a
known raise site (in any snapshot), the error raised there is a match even with no message to
read: the frame narrows its snapshots as usual, and `score.frame_score` says how sure that is.
A frame whose traceback's message was matched already adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from errkb.service.match.matcher.frames import REACH, Frame, innermost_frames, pinned_sites
from errkb.service.match.matcher.index import CompiledTemplate, FrameSite, MatchIndex
from errkb.service.match.matcher.normalize import Prepared
from errkb.service.match.matcher.score import frame_score


@dataclass(frozen=True, slots=True)
class FrameHit:
    """An entry one innermost frame points at, with the sites it pins."""

    entry: int
    frame: Frame
    sites: tuple[FrameSite, ...]


def frame_hits(index: MatchIndex, squeezed: str) -> list[FrameHit]:
    """Every (entry, innermost frame) pair where the frame is on one of the entry's raises."""
    hits: list[FrameHit] = []
    for frame in innermost_frames(squeezed):
        for e in index.raised_at(frame.path, frame.line):
            sites = pinned_sites(frame, index.entries[e].sites)
            if sites:
                hits.append(FrameHit(e, frame, tuple(sorted(sites, key=lambda s: s.sort_key))))
    return hits


def explained(hit: FrameHit, message_starts: list[int]) -> bool:
    """True when a matched message follows the frame (its traceback is accounted for)."""
    return any(hit.frame.end < q <= hit.frame.end + REACH for q in message_starts)


def scored_hit(hit: FrameHit, entry: CompiledTemplate, squeezed: str, sharing: int) -> float:
    """How sure the frame alone makes the match (see `score.frame_score`)."""
    function_named = any(hit.frame.tail.startswith(s.function) for s in hit.sites)
    window = squeezed[hit.frame.end : hit.frame.end + REACH]
    # The exception line (`ValueError:`, or the bare class when the message is gone); the raise's
    # source line (`raise ValueError(`) only repeats the code.
    class_named = window.find(entry.exception + ":") >= 0 or window.endswith(entry.exception)
    return frame_score(function_named=function_named, class_named=class_named, sharing=sharing)


def span(hit: FrameHit, prep: Prepared) -> tuple[int, int]:
    """Input offsets of the frame's text, through its function name."""
    end = hit.frame.end
    function = hit.sites[0].function
    if hit.frame.tail.startswith(function):
        end += len(function)
    return prep.to_input(hit.frame.start), prep.end_to_input(end)
