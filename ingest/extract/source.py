"""Line access to one parsed file: the exact source text of a node, and line windows.

AST column offsets count UTF-8 bytes, not characters, so slicing the decoded text with them is
wrong on any line holding non-ASCII text; this module does the conversion in one place.
"""

from __future__ import annotations

import ast


class SourceLines:
    """The lines of one normalized source text (1-based access)."""

    def __init__(self, text: str, split: list[str] | None = None) -> None:
        """`split` may give `text.split("\\n")` when the caller already has it."""
        self.text = text
        self._lines: list[str] | None = None
        if split is not None:
            self._lines = split[:-1] if split and split[-1] == "" else split

    @property
    def lines(self) -> list[str]:
        """The lines, split on first use (files without sites never need them)."""
        if self._lines is None:
            self._lines = self.text.split("\n")
            if self._lines[-1] == "":  # the text after the final newline is not a line
                self._lines.pop()
        return self._lines

    def __len__(self) -> int:
        return len(self.lines)

    def window(self, first: int, last: int) -> tuple[str, ...]:
        """Lines first..last inclusive (1-based), clamped to the file."""
        first = max(first, 1)
        last = min(last, len(self.lines))
        return tuple(self.lines[first - 1 : last])

    def segment(self, first: ast.AST, last: ast.AST | None = None) -> str:
        """The exact source text from the start of `first` to the end of `last` (or `first`)."""
        last = last or first
        start, end = first.lineno, last.end_lineno  # type: ignore[attr-defined]
        col, end_col = first.col_offset, last.end_col_offset  # type: ignore[attr-defined]
        if end is None or end_col is None:
            return ast.unparse(first)
        if start == end:
            return self.lines[start - 1].encode()[col:end_col].decode(errors="replace")
        head = self.lines[start - 1].encode()[col:].decode(errors="replace")
        middle = self.lines[start : end - 1]
        tail = self.lines[end - 1].encode()[:end_col].decode(errors="replace")
        return "\n".join([head, *middle, tail])
