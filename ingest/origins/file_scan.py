"""What one file's text says by a regex pass, for finding callers across a snapshot: the names it
calls (`name(`, with where), and the classes and functions it defines.

A scan depends on the file's content only, so it is made once per distinct content and kept
(`kept.py`): a release shares most of its files with the one before.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# The patterns start at a word or a literal, so the regex engine skips ahead quickly; where the
# meaning is "at the start of a line", the text before the match on its line is checked after
# (`_line_start`): a third of the time of anchored patterns (`^[ \t]*class...`, re.M) for the
# same matches.
_CALL = re.compile(r"\b(\w++)\(")
_CLASS = re.compile(r"class[ \t]+(\w+)")
_DEF = re.compile(r"def[ \t]+(\w+)")
_ASYNC = re.compile(r"[ \t]*async[ \t]+")
# `name = Class` or `name = mod.Class` alone on its line (the class assigned to a name): the
# part from `=` on, then the name before it (`_ALIASED`)
_ALIAS = re.compile(r"=[ \t]*(?:\w+\.)*([A-Z]\w*)[ \t]*$", re.M)
_ALIASED = re.compile(r"[ \t]*(\w+)[ \t]*")


def _line_start(text: str, at: int) -> str:
    """The text between the start of the line and `at`."""
    return text[text.rfind("\n", 0, at) + 1 : at]


def _at_line_start(text: str, at: int) -> bool:
    return not _line_start(text, at).strip(" \t")


def _aliases(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for m in _ALIAS.finditer(text):
        name = _ALIASED.fullmatch(_line_start(text, m.start()))
        if name is not None:
            out.append((m.group(1), name.group(1)))
    return tuple(out)


def _defs(text: str) -> tuple[str, ...]:
    out = []
    for m in _DEF.finditer(text):
        before = _line_start(text, m.start())
        if not before.strip(" \t") or _ASYNC.fullmatch(before):
            out.append(m.group(1))
    return tuple(out)


@dataclass(frozen=True)
class FileScan:
    """The calls of one file by callee name (offsets of the name, in order), the names of the
    classes and functions it defines, in order (a name defined twice is listed twice), and the
    classes it assigns to a name (`pool_cls = Pool`: (class, name)), in order."""

    calls: dict[str, list[int]]
    classes: tuple[str, ...]
    defs: tuple[str, ...]
    aliases: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, text: str) -> FileScan:
        """The scan of a file's text."""
        calls: dict[str, list[int]] = {}
        for m in _CALL.finditer(text):
            name = m.group(1)
            at = calls.get(name)
            if at is None:
                calls[name] = [m.start(1)]
            else:
                at.append(m.start(1))
        return cls(
            calls,
            tuple(m.group(1) for m in _CLASS.finditer(text) if _at_line_start(text, m.start())),
            _defs(text),
            _aliases(text),
        )

    def to_bytes(self) -> bytes:
        """The stored form (JSON)."""
        raw = [self.calls, self.classes, self.defs, self.aliases]
        return json.dumps(raw, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> FileScan:
        """A scan read back from `to_bytes`."""
        calls, classes, defs, aliases = json.loads(data)
        return cls(calls, tuple(classes), tuple(defs), tuple((c, n) for c, n in aliases))
