"""What one file's text says by a regex pass, for finding callers across a snapshot: the names it
calls (`name(`, with where), and the classes and functions it defines.

A scan depends on the file's content only, so it is made once per distinct content and kept
(`kept.py`): a release shares most of its files with the one before.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_CALL = re.compile(r"(?<![\w])(\w+)\(")
_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.M)
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_ALIAS = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*(?:\w+\.)*([A-Z]\w*)[ \t]*$", re.M)


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
            tuple(m.group(1) for m in _CLASS.finditer(text)),
            tuple(m.group(1) for m in _DEF.finditer(text)),
            tuple((m.group(2), m.group(1)) for m in _ALIAS.finditer(text)),
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
