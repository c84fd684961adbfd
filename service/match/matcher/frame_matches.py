"""Matches found from a traceback frame alone, when the message is missing or cut too short.

The innermost frame of a traceback names the file and line that raised. When that line is a
known raise site (in any snapshot), the error raised there is a match even with no message to
read: the frame narrows its snapshots as usual, and `score.frame_score` says how sure that is.
A frame whose traceback's message was matched already adds nothing.

When the frame's line is no known site's (a release that was not ingested), the source line
the traceback prints under the frame still tells a site that no message identifies (an assert,
a missing key, a raise without a message): the file and function as the frame's, and the
printed statement as the site's (`statements.statement_key`).
"""

from __future__ import annotations

from dataclasses import dataclass

from errkb.service.match.matcher.frames import REACH, Frame, innermost_frames, pinned_sites
from errkb.service.match.matcher.index import CompiledTemplate, FrameSite, MatchIndex
from errkb.service.match.matcher.normalize import Prepared
from errkb.service.match.matcher.score import frame_score
from errkb.service.match.matcher.statements import unquoted


@dataclass(frozen=True, slots=True)
class FrameHit:
    """An entry one innermost frame points at, with the sites it pins."""

    entry: int
    frame: Frame
    sites: tuple[FrameSite, ...]
    moved: bool = False  # the same function and assert, in a file of another name


def frame_hits(index: MatchIndex, squeezed: str) -> list[FrameHit]:
    """Every (entry, innermost frame) pair where the frame is on one of the entry's raises, by
    its line or by the statement it prints, keeping only the best kind of evidence per frame.

    With many releases ingested, a file's line number lands on different raises in different
    releases. So the frame's function must be the raise's (a frame names its function), and when
    the frame prints a statement that some of those raises are, only they are kept; a raise of
    the same statement in the same function at another line counts only when no raise at the
    frame's own line prints as the frame does.
    """
    hits: list[FrameHit] = []
    for frame in innermost_frames(squeezed):
        at_line: list[FrameHit] = []
        for e in index.raised_at(frame.path, frame.line):
            sites = [s for s in pinned_sites(frame, index.entries[e].sites) if _named(frame, s)]
            if sites:
                at_line.append(FrameHit(e, frame, tuple(sorted(sites, key=lambda s: s.sort_key))))
        printed = unquoted(frame.tail)
        same_statement = [
            h for h in at_line if _prints_after_function(printed, index.entries[h.entry], h)
        ]
        if same_statement:
            hits.extend(same_statement)
            continue
        found = {h.entry for h in at_line}
        by_statement = [h for h in statement_hits(index, frame) if h.entry not in found]
        if not at_line and not by_statement:
            by_statement = moved_assert_hits(index, frame)
        hits.extend(at_line)
        hits.extend(by_statement)
    return hits


def _named(frame: Frame, site: FrameSite) -> bool:
    """True when the frame's function is the site's (a frame with no readable name admits any)."""
    tail = frame.tail
    if not tail[:1].isalpha() and tail[:1] not in "_<":
        return True
    return tail.startswith(site.function)


def _prints_after_function(printed: str, entry: CompiledTemplate, hit: FrameHit) -> bool:
    """True when the frame prints the entry's statement right after its function's name."""
    if not entry.statement:
        return False
    function = hit.sites[0].function
    return printed.startswith(function) and _prints(printed[len(function) :], entry.statement)


_MAX_FUNCTION = 80  # characters of a function name tried at the start of a frame's tail
_LOOKUP_REACH = 120  # squeezed characters of the printed line a subscript is looked for in


def statement_hits(index: MatchIndex, frame: Frame) -> list[FrameHit]:
    """Entries whose site is in the frame's file and function and prints as the frame does."""
    if not index.statements:
        return []
    tail = frame.tail
    name = frame.path.rsplit("/", 1)[-1]
    out: list[FrameHit] = []
    # The function's name is glued to the printed line (squeezed): try each identifier prefix.
    k = 0
    while k < min(len(tail), _MAX_FUNCTION) and (tail[k].isalnum() or tail[k] == "_"):
        k += 1
        candidates = index.statements.get((tail[:k], name))
        if not candidates:
            continue
        printed = unquoted(tail[k:])
        for statement, e in candidates:
            if not _prints(printed, statement):
                continue
            entry = index.entries[e]
            sites = [s for s in entry.sites if s.function == tail[:k] and _same_file(frame, s)]
            if sites:
                out.append(FrameHit(e, frame, tuple(sorted(sites, key=lambda s: s.sort_key))))
    return out


_MOVED = 0.8  # a renamed file is weaker evidence than the frame's own file
_MAX_MOVED_FILES = 2  # files an assert's function may be found in before it tells nothing


def moved_assert_hits(index: MatchIndex, frame: Frame) -> list[FrameHit]:
    """Asserts printed as the frame prints, in a function of the frame's name but a file of
    another name (renamed or split since the poster's release: `unified_radix_cache.py` became
    `unified_tree_core.py`), when no file of the frame's name raises anything in a function of
    that name any more, and few files have such a function and assert."""
    tail = frame.tail
    out: list[FrameHit] = []
    k = 0
    while k < min(len(tail), _MAX_FUNCTION) and (tail[k].isalnum() or tail[k] == "_"):
        k += 1
        candidates = index.statements.get((tail[:k], ""))
        if not candidates:
            continue
        printed = unquoted(tail[k:])
        for statement, e in candidates:
            if printed.startswith(statement):
                sites = [s for s in index.entries[e].sites if s.function == tail[:k]]
                out.append(FrameHit(e, frame, tuple(sorted(sites, key=lambda s: s.sort_key)), True))
    files = {s.module_path for h in out for s in h.sites}
    if not 0 < len(files) <= _MAX_MOVED_FILES or _still_there(index, frame, out[0].sites[0]):
        return []
    return out


def _still_there(index: MatchIndex, frame: Frame, site: FrameSite) -> bool:
    """True when a file of the frame's name still raises in a function of the site's name: the
    function was not moved out of it, so the assert found elsewhere is another one."""
    name = frame.path.rsplit("/", 1)[-1]
    spans = index.raise_lines.get(name)
    if spans is None:
        return False
    entries = {e for _, _, e in spans.spans}
    return any(
        s.function == site.function and s.module_path.rsplit("/", 1)[-1] == name
        for e in entries
        for s in index.entries[e].sites
    )


def _prints(printed: str, statement: str) -> bool:
    """True when the printed line is the statement: it starts with it, or (a subscript inside
    an assignment) holds it near its start."""
    if printed.startswith(statement):
        return True
    return not statement.startswith(("assert", "raise")) and statement in printed[:_LOOKUP_REACH]


def _same_file(frame: Frame, site: FrameSite) -> bool:
    path = frame.path
    tail = site.module_path
    return path == tail or path.endswith("/" + tail) or path.endswith("/" + site.path)


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
    if entry.statement and not class_named:  # `AssertionError` alone, before the next log line
        class_named = window.find(entry.exception) >= 0 and entry.exception not in entry.statement
    score = frame_score(function_named=function_named, class_named=class_named, sharing=sharing)
    return round(score * _MOVED, 4) if hit.moved else score


def span(hit: FrameHit, prep: Prepared) -> tuple[int, int]:
    """Input offsets of the frame's text, through its function name."""
    end = hit.frame.end
    function = hit.sites[0].function
    if hit.frame.tail.startswith(function):
        end += len(function)
    return prep.to_input(hit.frame.start), prep.end_to_input(end)
