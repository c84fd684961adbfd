"""What a class stores in `self.x`: the expressions its methods assign, so a guard reading
`self.tp_size` can be traced to `server_args.tp_size` set in `__init__`.

The assignments are read from the file's real text, not from the tree: the incremental extractor
(`ingest.extract.units`) parses a module with unchanged methods replaced by stand-ins, and the
sites it extracts must be the same as a whole parse gives. Each `self.name = value` line is
given to the top-level class whose `class` line is the nearest above it (a module-level `def`
or `class` ends a class), and its statement is parsed alone (continuation lines included, up to
`MAX_LINES`); one that does not parse is skipped.
"""

from __future__ import annotations

import ast
import re
import warnings

# `self.name = ...` / `self.name: T = ...` at the start of a line (not `==`, not `self.a.b =`)
_ASSIGN = re.compile(r"^([ \t]+)self\.([^\W\d]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_TOP = re.compile(r"^(?:class[ \t]+([^\W\d]\w*)|(?:async[ \t]+)?def[ \t])", re.M)
MAX_LINES = 6  # lines one assignment may span
MAX_VALUES = 3  # distinct values kept per attribute
MAX_VALUE_CHARS = 200

ClassAttributes = dict[str, dict[str, tuple[str, ...]]]  # class -> attribute -> values


def class_attributes(text: str) -> ClassAttributes:
    """For each top-level class of a module's text, the values its methods assign to each
    `self.name` (source text, in order, without repeats)."""
    if "self." not in text:
        return {}
    tops = [(m.start(), m.group(1)) for m in _TOP.finditer(text)]
    out: ClassAttributes = {}
    k = -1
    for m in _ASSIGN.finditer(text):
        while k + 1 < len(tops) and tops[k + 1][0] < m.start():
            k += 1
        owner = tops[k][1] if k >= 0 else None
        if not owner:
            continue
        value = _value(text, m.start(), len(m.group(1)))
        if value is None:
            continue
        values = out.setdefault(owner, {}).setdefault(m.group(2), ())
        if value not in values and len(values) < MAX_VALUES:
            out[owner][m.group(2)] = (*values, value)
    return out


def _value(text: str, start: int, indent: int) -> str | None:
    """The assigned expression of the statement at `start`, if it parses within MAX_LINES."""
    end = start
    for _ in range(MAX_LINES):
        end = text.find("\n", end + 1)
        end = len(text) if end < 0 else end
        # brackets and backslashes carry the statement on: its other lines' indent is free
        source = text[start + indent : end]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            if end >= len(text):
                return None
            continue
        stmt = tree.body[0] if len(tree.body) == 1 else None
        value = getattr(stmt, "value", None)
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or value is None:
            return None
        shown = ast.unparse(value)
        return shown if len(shown) <= MAX_VALUE_CHARS else None
    return None


def used(attributes: dict[str, tuple[str, ...]], names: frozenset[str]) -> str:
    """The assignments of the attributes among `names`, as text for a cache context digest."""
    return "\0".join(f"{n}\0" + "\0".join(attributes[n]) for n in sorted(names & attributes.keys()))
