"""`ast.unparse` once per node: a trace unparses the same shared nodes (`trace.parse_expr` keeps
the expressions it parsed) again and again, about six times each on a large release.
"""

from __future__ import annotations

import ast

_TEXTS: dict[int, tuple[ast.AST, str]] = {}  # by node identity, the node kept with its text
_TEXTS_KEPT = 200_000


def unparsed(node: ast.AST) -> str:
    """`ast.unparse(node)`, computed once per node object."""
    hit = _TEXTS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    text = ast.unparse(node)
    if len(_TEXTS) >= _TEXTS_KEPT:
        _TEXTS.clear()
    _TEXTS[id(node)] = (node, text)
    return text
