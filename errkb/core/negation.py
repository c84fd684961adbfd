"""Comparisons negated: one table for the ingester (which reads guards as text) and the
knowledge code (which rewrites them as syntax), so `not x == y` reads `x != y` on both sides.
"""

from __future__ import annotations

import ast

# Each comparison and its negation: `not a < b` is `a >= b`, `not a is b` is `a is not b`.
NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}
# The operators as Python spells them.
SYMBOLS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}
NEGATED_SYMBOLS: dict[str, str] = {SYMBOLS[op]: SYMBOLS[neg] for op, neg in NEGATED.items()}


def negate(node: ast.expr) -> ast.expr:
    """A test negated the way a person would write it (`x is None` for `not x is not None`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in NEGATED:
        return ast.Compare(node.left, [NEGATED[type(node.ops[0])]()], node.comparators)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return ast.BoolOp(ast.And(), [negate(v) for v in node.values])
    return ast.UnaryOp(ast.Not(), node)
