"""The text of the expressions a flag definition is written with (pure).

An option's names, help, choices and default are read from the syntax tree as the text a reader
of the code sees: string literals with their concatenations and f-strings, else a node's exact
source. `ingest.extract.argparse_flags` and `ingest.extract.field_flags` read both ways of
declaring an option with these.
"""

from __future__ import annotations

import ast


class NodeSource:
    """Source text of nodes, with line offsets computed once (get_source_segment re-splits)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)

    def of(self, node: ast.AST) -> str:
        """The exact source of a node, or its unparsed form when positions are missing."""
        lineno, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if None in (lineno, end, col, end_col) or end > len(self.lines):  # type: ignore[operator]
            return ast.unparse(node)
        first, last = lineno - 1, end - 1  # type: ignore[operator]
        if first == last:
            text = self.lines[first].encode()[col:end_col].decode(errors="replace")
        else:
            parts = [self.lines[first].encode()[col:].decode(errors="replace")]
            parts += self.lines[first + 1 : last]
            parts.append(self.lines[last].encode()[:end_col].decode(errors="replace"))
            text = "".join(parts)
        return text if "\n" not in text else ast.unparse(node)


def text_of(node: ast.AST | None) -> str | None:
    """A string expression as text: literals, implicit/`+` concatenation, f-strings as `{expr}`."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                out.append("{" + ast.unparse(part.value) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text_of(node.left), text_of(node.right)
        return None if left is None or right is None else left + right
    return None


def strings_of(node: ast.AST | None) -> tuple[str, ...] | None:
    """A list/tuple/set of string literals, or None when it is anything else."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [text_of(e) for e in node.elts]
        if all(i is not None for i in items):
            return tuple(i for i in items if i is not None)
    return None


def choices_of(node: ast.AST | None, src: NodeSource) -> tuple[str, ...] | None:
    """Choices as displayed: literal items, else the expression's source as a single item."""
    if node is None:
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return tuple((t if (t := text_of(e)) is not None else src.of(e)) for e in node.elts)
    return (src.of(node),)


def keywords_of(call: ast.Call) -> dict[str, ast.expr]:
    """A call's keyword arguments by name (`**kwargs` left out)."""
    return {k.arg: k.value for k in call.keywords if k.arg is not None}
