"""Slices of a module's text by node position: cheaper than unparsing each node."""

from __future__ import annotations

import ast

MAX_EXPR = 300  # characters of an assigned expression kept (longer ones say little here)


class SourceSlices:
    """Slices of a module's text by node position (cheaper than unparsing each node)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)

    def of(self, node: ast.AST) -> str:
        """The node's source, "" when longer than `MAX_EXPR` (it says little here)."""
        lineno, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0)
        if not lineno or not end or end - lineno > 6:
            return ""
        a = self.starts[lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        b = self.starts[end - 1] + (node.end_col_offset or 0)  # type: ignore[attr-defined]
        return self.text[a:b] if 0 < b - a <= MAX_EXPR else ""
