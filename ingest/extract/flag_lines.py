"""Where a file's text may define flags, found without parsing it (pure).

Extraction by units (`ingest.extract.incremental`) never takes a unit's flags from the cache:
every unit that may define one (an argparse call, or the header of a flag class) is parsed.
This finds those lines in the whole text at once, with `str.find` rather than a regex scan, and
tells whether a text may define flags at all. The class-name globs come from
`ingest.extract.flag_classes`; the argparse marker is the byte prefilter's (`FLAG_MARKER`).
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from errkb.ingest.extract.decode import FLAG_MARKER

_CLASS = re.compile(r"\bclass\s+([^\W\d]\w*)")


def flag_lines(text: str, globs: tuple[str, ...]) -> list[int]:
    """Sorted numbers of the lines where a unit may define flags: an argparse call, or the
    `class` keyword of a flag class (as `may_define` finds them, for the whole text at once)."""
    offsets = _find_all(text, FLAG_MARKER.decode())
    for pos in _find_all(text, "class"):  # `str.find` is far faster than a `\b` regex scan
        m = _CLASS.match(text, pos)
        if m is not None and _flag_class(m.group(1), globs):
            offsets.append(pos)
    offsets.sort()
    out, line, last = [], 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        out.append(line)
    return out


def _find_all(text: str, word: str) -> list[int]:
    """Every offset of `word` in text (overlaps included)."""
    out, pos = [], text.find(word)
    while pos >= 0:
        out.append(pos)
        pos = text.find(word, pos + 1)
    return out


def _flag_class(name: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, g) for g in globs)


def may_define(text: str, globs: tuple[str, ...]) -> bool:
    """True when text may define flags: an argparse call, or a flag class."""
    if FLAG_MARKER.decode() in text:
        return True
    return any(_flag_class(name, globs) for name in _CLASS.findall(text))
