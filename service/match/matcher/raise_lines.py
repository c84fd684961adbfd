"""Where a traceback frame points: the raise spans of each file name, across every snapshot.

A frame names a file and a line; the entries raised there are those whose span (first to last
line of the raise) holds that line, in a file of the same name (path suffixes are compared by
`frames.pinned_sites`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from errkb.service.match.matcher.index import CompiledTemplate


@dataclass(frozen=True, slots=True)
class RaiseLines:
    """The raise spans of one file name, sorted by first line, for a bisected lookup (a file
    such as server_args.py holds thousands of spans over a long history)."""

    firsts: tuple[int, ...]
    spans: tuple[tuple[int, int, int], ...]  # (first line, last line, entry)
    longest: int  # lines of the longest span: how far back a lookup looks

    def entries_at(self, line: int) -> list[int]:
        """Entries whose span holds `line`."""
        found: list[int] = []
        i = bisect_right(self.firsts, line) - 1
        while i >= 0 and self.firsts[i] >= line - self.longest:
            lo, hi, e = self.spans[i]
            if hi >= line and e not in found:
                found.append(e)
            i -= 1
        return found


def raise_lines(entries: Sequence[CompiledTemplate]) -> dict[str, RaiseLines]:
    """Distinct raise spans per file name: a site unchanged over many snapshots counts once."""
    found: dict[str, set[tuple[int, int, int]]] = {}
    for e, entry in enumerate(entries):
        for site in entry.sites:
            name = site.module_path.rsplit("/", 1)[-1]
            found.setdefault(name, set()).add((site.line, site.end_line, e))
    out = {}
    for name, spans in found.items():
        ordered = tuple(sorted(spans))
        out[name] = RaiseLines(
            firsts=tuple(s[0] for s in ordered),
            spans=ordered,
            longest=max(s[1] - s[0] for s in ordered),
        )
    return out
