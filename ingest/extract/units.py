"""Splitting a module's text into function units, without parsing it.

A unit is a top-level function or a method of a top-level class, from its first decorator to its
last code line. Units let a changed file be re-extracted function by function: a unit whose text
did not change keeps its cached sites, and a unit that cannot hold a site is never parsed; both
are replaced by a one-line stand-in (`def name(): pass`, same line, so every line number and the
names the module binds stay the same) in the text that is parsed (`masked`).

The split reads lines only, so a line inside a multi-line string or bracket can fool it. That is
why `aligned` checks a split against the tree parsed from the masked text: every unit must be
exactly one statement of its module or class body, with no other statement in its lines. The
caller falls back to parsing the whole file when it is not.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

_DEF = re.compile(r"(?:async[ \t]+)?def[ \t]+([^\W\d]\w*)")
_CLOSERS = ")]}"
_CLASS_NAME = re.compile(r"class[ \t]+([^\W\d]\w*)")
_HEADER_END = re.compile(r":[ \t]*(#.*)?$")


class Unit(NamedTuple):
    """One function unit: lines start..end (1-based, inclusive), its `def` at `def_line`.

    A named tuple: a file has hundreds, made in one process and sent to another.
    """

    start: int
    def_line: int
    end: int
    indent: str
    name: str
    owner: str  # the enclosing top-level class's name, "" for a module-level function
    owner_line: int  # that header's line number, 0 for a module-level function

    def text(self, lines: list[str]) -> str:
        """The unit's own lines."""
        return "\n".join(lines[self.start - 1 : self.end])


def _code(line: str) -> bool:
    """True for a line holding code (not blank, not only a comment)."""
    rest = line.lstrip(" \t\f")
    return bool(rest) and not rest.startswith("#")


class _Text:
    """A module's lines plus a fast way to find the lines that start at a given indent."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.text = text
        self.lines = lines
        self._at: dict[int, int] = {0: 0}  # line index -> offset, for the lines found so far

    def starts_at(self, indent: str, first: int, last: int, near: int = 0) -> list[int]:
        """Indexes of code lines in first..last that start exactly at `indent`.

        The search is for the literal "\\n" + indent (fast in `re`), and line numbers come from
        counting newlines between hits, so no per-line Python work is done.
        """
        text = self.text
        pos = self._offset(first, near)
        found = [first] if _starts(self.lines[first], indent) else []
        pattern = re.compile("\n" + re.escape(indent) + r"[^\s#]")
        line = first
        for m in pattern.finditer(text, pos):
            line += text.count("\n", pos, m.start() + 1)
            if line > last:
                break
            pos = m.start() + 1
            self._at[line] = pos
            found.append(line)
        return found

    def _offset(self, line: int, near: int) -> int:
        """The offset of a line's first character, counted on from the known line `near`."""
        known = self._at.get(line)
        if known is None:
            known = self._at[near]
            for _ in range(line - near):
                known = self.text.index("\n", known) + 1
            self._at[line] = known
        return known

    def trimmed(self, first: int, last: int) -> int:
        """`last`, moved up past trailing blank and comment lines (never above `first`)."""
        while last > first and not _code(self.lines[last]):
            last -= 1
        return last


def _starts(line: str, indent: str) -> bool:
    """True for a code line starting exactly at `indent`."""
    return line.startswith(indent) and line[len(indent) : len(indent) + 1] not in (
        "",
        " ",
        "\t",
        "#",
        "\f",
    )


def split_units(text: str, lines: list[str]) -> list[Unit]:
    """The function units of a module, in line order (see the module docstring)."""
    src = _Text(text, lines)
    units: list[Unit] = []
    for start, head, end in _statements(src, "", 0, len(lines) - 1):
        match = _DEF.match(lines[head])
        if match:
            units.append(Unit(start + 1, head + 1, end + 1, "", match.group(1), "", 0))
        elif lines[head].startswith("class"):
            units.extend(_methods(src, head, end))
    return units


def _statements(
    src: _Text, indent: str, first: int, last: int, near: int = 0
) -> list[tuple[int, int, int]]:
    """(first line, decorated line, last code line) of each statement at `indent` in a range.

    A statement runs from a line starting at `indent` to the line before the next one (a closing
    bracket there continues it); decorators are joined to the statement they decorate.
    """
    starts = [
        i
        for i in src.starts_at(indent, first, last, near)
        if src.lines[i][len(indent)] not in _CLOSERS
    ]
    out: list[tuple[int, int, int]] = []
    k = 0
    while k < len(starts):
        begin = head = starts[k]
        while src.lines[head][len(indent)] == "@" and k + 1 < len(starts):
            k += 1
            head = starts[k]
        stop = starts[k + 1] - 1 if k + 1 < len(starts) else last
        out.append((begin, head, src.trimmed(head, stop)))
        k += 1
    return out


def _methods(src: _Text, head: int, end: int) -> list[Unit]:
    """The method units of the top-level class whose `class` line is at index `head`."""
    lines = src.lines
    named = _CLASS_NAME.match(lines[head])
    if named is None:
        return []
    name = named.group(1)
    body_at = head
    while body_at <= end and not _HEADER_END.search(lines[body_at]):
        body_at += 1  # a header running over several lines
    body_at += 1
    while body_at <= end and not _code(lines[body_at]):
        body_at += 1
    if body_at > end:
        return []
    first = lines[body_at]
    body = first[: len(first) - len(first.lstrip(" \t"))]
    if not body:
        return []
    out: list[Unit] = []
    for start, at, stop in _statements(src, body, body_at, end, head):
        match = _DEF.match(lines[at], len(body))
        if match:
            out.append(Unit(start + 1, at + 1, stop + 1, body, match.group(1), name, head + 1))
    return out


def masked(lines: list[str], units: list[Unit], hide: set[int]) -> str:
    """The module text with the units numbered in `hide` replaced by one-line stand-ins."""
    out = list(lines)
    for k in hide:
        u = units[k]
        for line in range(u.start - 1, u.end):
            out[line] = ""
        out[u.start - 1] = f"{u.indent}def {u.name}(): pass"
    return "\n".join(out)


def aligned(tree: ast.Module, units: list[Unit], hidden: set[int]) -> bool:
    """True when each unit is exactly one function statement of its module or class body.

    A hidden unit (see `masked`) must be its stand-in: a `def` of its name on its first line.
    """
    bodies: dict[int, list[ast.stmt]] = {0: tree.body}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            bodies[stmt.lineno] = stmt.body
    spans: dict[int, tuple[list[int], list[ast.stmt]]] = {}
    for index, u in enumerate(units):
        body = bodies.get(u.owner_line)
        if body is None:
            return False
        if u.owner_line not in spans:
            spans[u.owner_line] = ([_first_line(s) for s in body], body)
        starts, stmts = spans[u.owner_line]
        k = bisect_left(starts, u.start)
        if k == len(stmts) or starts[k] != u.start:
            return False
        node = stmts[k]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != u.name:
            return False
        def_line = u.start if index in hidden else u.def_line
        if node.lineno != def_line or (node.end_lineno or node.lineno) > u.end:
            return False
        if k + 1 < len(stmts) and starts[k + 1] <= u.end:
            return False
        if bisect_right(starts, u.end) != k + 1:
            return False
    return True


def _first_line(stmt: ast.stmt) -> int:
    """A statement's first line, decorators included."""
    decorators = getattr(stmt, "decorator_list", None)
    if decorators:
        return min(stmt.lineno, *(d.lineno for d in decorators))
    return stmt.lineno
