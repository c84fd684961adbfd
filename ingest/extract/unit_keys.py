"""A file's function units with their cache keys: what extraction by units looks up (pure).

Each unit (`ingest.extract.units`) has a cache key:
- a unit that mentions an exception name: "u:" + digest of its text, the three lines around it
  (its snippets may show them) and its class header;
- any other unit holds no site; "n:" + digest of its text records that it was seen to parse.
Units that may define flags are marked too: they are always parsed, never taken from the cache.
Files under `MIN_UNIT_BYTES` are not split at all. `ingest.extract.incremental` extracts a file
from its `Split`; the ingest splits files in the workers first, to look their keys up.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from typing import NamedTuple

from errkb.core.records import ExtractConfig
from errkb.ingest.extract.decode import decoded, may_define_flags, rejected
from errkb.ingest.extract.flag_classes import flag_class_globs
from errkb.ingest.extract.flag_lines import flag_lines
from errkb.ingest.extract.sites import lines_mentioning
from errkb.ingest.extract.units import Unit, split_units

UNIT, VALID = "u:", "n:"
MIN_UNIT_BYTES = 4_000  # smaller files are parsed whole: splitting them saves nothing
# A snippet starts at most 2 lines above its unit (see extract.snippet), clamped at line 1: how
# many lines there are above a unit, up to this, is part of its key; the lines are read anew.
ABOVE = 3


class Split(NamedTuple):
    """A file's units, their cache keys, and which units hold sites or may define flags."""

    units: list[Unit]
    keys: list[str]
    markers: frozenset[int]  # units mentioning an exception name
    flagged: frozenset[int]  # units that may define flags: always parsed, never cached

    @property
    def lookups(self) -> list[str]:
        """The keys worth looking up in the cache."""
        return [key for k, key in enumerate(self.keys) if k not in self.flagged]


class Plan:
    """One file's text and `Split`; `split` is None when the file is not extracted by units."""

    def __init__(
        self, data: bytes, path: str, config: ExtractConfig, split: Split | None = None
    ) -> None:
        self.text: str = ""
        self.lines: list[str] = []
        self.split: Split | None = None
        self.flag_file = False
        if len(data) < MIN_UNIT_BYTES or rejected(data, path, config) is not None:
            return
        text = decoded(data)
        if not isinstance(text, str):
            return
        self.text = text
        self.lines = text.split("\n")
        self.flag_file = may_define_flags(data, config.flag_classes, path)
        self.split = split or self._split(path, config)

    def _split(self, path: str, config: ExtractConfig) -> Split | None:
        lines = self.lines
        units = split_units(self.text, lines)
        if not units:
            return None
        hits = lines_mentioning(self.text, config.markers)
        keys, markers = [], set()
        for k, u in enumerate(units):
            if _holds(hits, u.start, u.end):
                markers.add(k)
                above = min(u.start - 1, ABOVE)
                keys.append(UNIT + digest(f"{u.owner}\0{above}\0{u.text(lines)}"))
            else:
                keys.append(VALID + digest(u.text(lines)))
        flagged: set[int] = set()
        if self.flag_file:
            at = flag_lines(self.text, flag_class_globs(config.flag_classes, path))
            flagged = {k for k, u in enumerate(units) if _holds(at, u.start, u.end)}
        return Split(units, keys, frozenset(markers), frozenset(flagged))


def _holds(lines: list[int], first: int, last: int) -> bool:
    """True when the sorted line numbers `lines` include one in first..last."""
    i = bisect_right(lines, last)
    return i > 0 and lines[i - 1] >= first


def split_file(data: bytes, path: str, config: ExtractConfig) -> Split | None:
    """The file's split, None when it is not extracted by units."""
    return Plan(data, path, config).split


def digest(text: str) -> str:
    """The hex SHA-1 of a text (lone surrogates kept), as cache keys and contexts use it."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
