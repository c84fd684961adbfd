"""Values that make a guard's test on one input hold or fail, found by trying candidates.

For `not 0.0 < self.top_p <= 1.0` the candidates are built around the constants the test names
(0 and 1, one above and below, halfway); each is put in place of the input and the test is
evaluated on constants only. `raising` holds the test, `fixing` does not. Nothing is run but
comparisons of numbers: a test with anything else in it gives no values.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable


def _constants(node: ast.expr) -> list[float]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, int | float):
            if not isinstance(sub.value, bool):
                out.append(float(sub.value))
    return out


def _eval(node: ast.expr, is_input: Callable[[ast.expr], bool], x: float) -> object:
    """The test's value with the input set to x; raises LookupError when it reads anything else."""
    if is_input(node):
        return x
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, is_input, x)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.USub) and isinstance(v, int | float):
            return -v
    if isinstance(node, ast.BoolOp):
        vals = [bool(_eval(v, is_input, x)) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, is_input, x)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, is_input, x)
            ok = {
                ast.Lt: lambda a, b: a < b,
                ast.LtE: lambda a, b: a <= b,
                ast.Gt: lambda a, b: a > b,
                ast.GtE: lambda a, b: a >= b,
                ast.Eq: lambda a, b: a == b,
                ast.NotEq: lambda a, b: a != b,
            }.get(type(op))
            if ok is None or not ok(left, right):  # type: ignore[no-untyped-call]
                return False
            left = right
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        if node.func.attr in ("isfinite", "isnan", "isinf") and len(node.args) == 1:
            v = _eval(node.args[0], is_input, x)
            return getattr(math, node.func.attr)(v)
    raise LookupError(ast.unparse(node))


def _shown(x: float) -> int | float:
    return int(x) if x == int(x) else x


def raising_and_fixing(
    tests: list[ast.expr], is_input: Callable[[ast.expr], bool]
) -> tuple[int | float, int | float] | None:
    """(a value under which every test holds, one under which one fails), or None."""
    consts = sorted({c for t in tests for c in _constants(t)}) or [0.0]
    candidates: list[float] = []
    for c in consts:
        candidates += [c + 1, c - 1, c, c + 0.5, c - 0.5]
    candidates += [(a + b) / 2 for a, b in zip(consts, consts[1:], strict=False)] + [1.0, 0.0]
    raising = fixing = None
    try:
        for x in candidates:
            holds = all(bool(_eval(t, is_input, x)) for t in tests)
            if holds and raising is None:
                raising = x
            if not holds and fixing is None:
                fixing = x
    except (LookupError, TypeError, ValueError, OverflowError):
        return None
    if raising is None or fixing is None:
        return None
    return _shown(raising), _shown(fixing)
