"""The source lines shown with a raise: from just above its outermost guard to just after it."""

from __future__ import annotations

from errkb.core.records import Snippet
from errkb.ingest.extract.source import SourceLines

MAX_ABOVE = 60  # lines above the raise, however far out the outermost guard is (at 40, an
# if/elif chain of a few branches lost its guarding `if`)
CONTEXT_ABOVE = 2  # lines shown above the outermost guard (usually its comment)
CONTEXT_BELOW = 3  # lines shown after the raise's last line
UNGUARDED_ABOVE = 3  # lines shown above a raise that no condition guards


def snippet_for(lines: SourceLines, start: int, end: int, outermost_guard: int | None) -> Snippet:
    """The snippet of a raise spanning lines start..end, guarded from `outermost_guard` on."""
    top = start - UNGUARDED_ABOVE if outermost_guard is None else outermost_guard - CONTEXT_ABOVE
    first = max(1, top, start - MAX_ABOVE)
    last = min(len(lines), end + CONTEXT_BELOW)
    return Snippet(start=first, lines=lines.window(first, last), raise_start=start, raise_end=end)
