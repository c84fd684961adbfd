"""Python traceback frames as evidence: the innermost frame pins the raise site and version.

Frames are read from the squeezed text (`File"/x/y.py",line406,in_init_pools`), so a traceback
that a terminal or a log shipper wrapped, or that carries a per-line prefix, still parses. A
match whose text starts shortly after a frame (the raise's source line, the caret lines, then
`ValueError: ...`) belongs to that frame's traceback. The frame pins the sites of the matched
error whose path ends with the frame's path, whose raise spans the frame's line, and (when one
does) whose function has the frame's name; their snapshots are the versions consistent with
the input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from errkb.service.match.matcher.index import FrameSite

MAX_INNERMOST = 64  # tracebacks whose innermost frame is looked up, from the end of the text
_MAX_SCAN = 1024  # frames read at most, from the end (a body of only frames costs no more)
# What starts a new traceback (squeezed): a frame after one of these is not a deeper call.
_BREAKS = ("Traceback(mostrecentcalllast)", "Theaboveexception", "Duringhandlingofthe")

_FILE = 'File"'
_LINE = '",line'
REACH = 800  # squeezed characters after a frame that still belong to its traceback
_REACH = REACH
_MAX_PATH = 1000
_MAX_FRAME = _MAX_PATH + 40
_TAIL = 200


@dataclass(frozen=True, slots=True)
class Frame:
    """One `File "...", line N, in func` frame, located in squeezed text."""

    path: str
    line: int
    tail: str  # squeezed text after ",in": the function name glued to what follows
    start: int  # squeezed offsets of the frame text
    end: int


def frame_before(squeezed: str, pos: int) -> Frame | None:
    """The innermost frame of the traceback that text starting at `pos` ends, if any.

    Only the stretch just before `pos` is read, so a body made of thousands of frames costs no
    more than one holding a single traceback.
    """
    lo = max(0, pos - _REACH - _MAX_FRAME)
    at = squeezed.rfind(_FILE, lo, pos)
    for _ in range(3):  # skip a few `File"` that are not frames
        if at < 0:
            return None
        frame = _frame_at(squeezed, at)
        if frame is not None:
            return frame if pos - frame.end <= _REACH else None
        at = squeezed.rfind(_FILE, lo, at)
    return None


def _frame_at(sq: str, pos: int) -> Frame | None:
    path_start = pos + len(_FILE)
    quote = sq.find(_LINE, path_start, path_start + _MAX_PATH)
    if quote < 0:
        return None
    i = quote + len(_LINE)
    j = i
    while j < len(sq) and j < i + 9 and sq[j].isdigit():
        j += 1
    if j == i:
        return None
    tail_start = j + 3 if sq.startswith(",in", j) else j
    path = sq[path_start:quote].replace("\\", "/")
    return Frame(
        path=path,
        line=int(sq[i:j]),
        tail=sq[tail_start : tail_start + _TAIL],
        start=pos,
        end=tail_start,
    )


def innermost_frames(squeezed: str) -> list[Frame]:
    """The innermost frame of each traceback in the text, in text order (the last
    `MAX_INNERMOST` tracebacks; frames are read backwards from the end, `_MAX_SCAN` at most).

    A frame is innermost when no frame of the same traceback follows it: the next frame, if
    any, comes after a new `Traceback (most recent call last):` or a chained-exception line,
    or further than a traceback's source line and message reach.
    """
    out: list[Frame] = []
    deeper: Frame | None = None  # the frame found just after the current one
    pos = len(squeezed)
    for _ in range(_MAX_SCAN):
        if len(out) >= MAX_INNERMOST:
            break
        at = squeezed.rfind(_FILE, 0, pos)
        if at < 0:
            break
        pos = at
        frame = _frame_at(squeezed, at)
        if frame is None:
            continue
        if (
            deeper is None
            or deeper.start - frame.end > _REACH
            or _breaks(squeezed, frame.end, deeper.start)
        ):
            out.append(frame)
        deeper = frame
    return out[::-1]


def named_entries(frames: list[Frame], functions: Any, most: int = 16) -> list[int]:
    """The entries raised in the file and function each frame names, in any snapshot (at most
    `most` a frame): candidates however few of their words the text shares."""
    out: list[int] = []
    for frame in frames:
        by_function = functions.get(frame.path.rsplit("/", 1)[-1])
        if not by_function:
            continue
        for function, entries in by_function.items():
            if frame.tail.startswith(function):
                out.extend(entries[:most])
    return out


def runs_in_test(squeezed: str, test_path: Callable[[str], bool]) -> bool:
    """True when a frame of the text (the last `_MAX_SCAN`) lies in a file of tests: the
    traceback ran under a test, where a project's own test code is what one expects to fail."""
    pos = len(squeezed)
    for _ in range(_MAX_SCAN):
        at = squeezed.rfind(_FILE, 0, pos)
        if at < 0:
            return False
        pos = at
        frame = _frame_at(squeezed, at)
        if frame is not None and test_path(frame.path):
            return True
    return False


def affinity(frame: Frame, sites: tuple[FrameSite, ...]) -> int:
    """How closely the frame before a message names one of these sites, in any release: 2 for
    its file and function, 1 for its file, 0 for neither. It breaks ties between errors that
    read alike when the frame's line is no ingested release's (a release between the pins)."""
    best = 0
    for s in sites:
        if _path_matches(frame.path, s):
            if frame.tail.startswith(s.function):
                return 2
            best = 1
    return best


def _breaks(sq: str, start: int, end: int) -> bool:
    return any(sq.find(marker, start, end) >= 0 for marker in _BREAKS)


def pinned_sites(frame: Frame, sites: tuple[FrameSite, ...]) -> list[FrameSite]:
    """The sites this frame points at: path suffix and line, narrowed by function when possible."""
    hits = [s for s in sites if _path_matches(frame.path, s) and s.line <= frame.line <= s.end_line]
    named = [s for s in hits if frame.tail.startswith(s.function)]
    return named or hits


def contradicts(frame: Frame, sites: tuple[FrameSite, ...]) -> bool:
    """True when the frame right before a message shows a function that raises none of these
    sites in any ingested release: the traceback says the error came from elsewhere."""
    tail = frame.tail
    if not tail[:1].isalpha() and tail[:1] != "_":  # no readable function name: no claim
        return False
    return not any(_path_matches(frame.path, s) and tail.startswith(s.function) for s in sites)


def _path_matches(path: str, site: FrameSite) -> bool:
    tail = site.module_path
    return path == tail or path.endswith("/" + tail) or path.endswith("/" + site.path)


def is_foreign(frame: Frame, roots: tuple[str, ...]) -> bool:
    """True when the frame's file lies in none of the project's top-level folders."""
    path = "/" + frame.path
    return bool(roots) and not any(f"/{root}/" in path for root in roots)
