"""Small questions about guard expressions' syntax trees, shared by the nouns and the clauses.

Only shapes are tested here (`len(x)`, `x is None`, `a % b`, `lo < x <= hi`); what they mean in
words is decided in `nouns` and `phrases`.
"""

from __future__ import annotations

import ast

from errkb.core.negation import NEGATED, negate

__all__ = ["negate"]  # re-exported: the clauses negate tests as the ingester does

MAX_CODE = 80


def negatable(node: ast.expr) -> bool:
    """True when `negate` gives a simpler test than `not (...)`."""
    if isinstance(node, ast.Compare):
        return len(node.ops) == 1 and type(node.ops[0]) in NEGATED
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)


def code(text: str) -> str:
    """Source text in backticks, shortened in the middle when very long."""
    text = " ".join(text.split())
    if len(text) > MAX_CODE:
        text = text[: MAX_CODE - 25] + " … " + text[-20:]
    return f"`{text}`"


def parse(text: str | None) -> ast.expr | None:
    """An expression's tree, or None when it does not parse."""
    if not text:
        return None
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def number(node: ast.expr) -> float | None:
    """The value of a numeric literal (`-1` included), None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        n = number(node.operand)
        return None if n is None else -n
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if not isinstance(node.value, bool):
            return float(node.value)
    return None


def num(x: float) -> str:
    """A number as written: `2`, not `2.0`."""
    return str(int(x)) if x == int(x) else str(x)


def names(node: ast.expr) -> list[str] | None:
    """`a.b().c` -> ["a", "b", "c"]; None when the chain does not start at a name."""
    out: list[str] = []
    while isinstance(node, ast.Attribute | ast.Call):
        if isinstance(node, ast.Call):
            if node.args or node.keywords:
                return None  # `f(x).y`: the call's argument is part of what it is
            node = node.func
            continue
        out.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        out.append(node.id)
        return out[::-1]
    return None


def last_name(node: ast.expr) -> str | None:
    """The name an expression ends with (`x`, `a.b.x`), None otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def call_name(node: ast.Call) -> str:
    """The called function's own name (`f` of `a.b.f(...)`), "" when it has none."""
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def is_range(node: ast.Compare) -> bool:
    """`lo < x <= hi`."""
    return len(node.ops) == 2 and all(type(o) in (ast.Lt, ast.LtE) for o in node.ops)


def is_none(node: ast.expr) -> bool:
    """The literal `None`."""
    return isinstance(node, ast.Constant) and node.value is None


def is_none_test(node: ast.expr) -> bool:
    """`x is None` or `x is not None`."""
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is | ast.IsNot)
        and is_none(node.comparators[0])
    )


def len_of(node: ast.expr) -> ast.expr | None:
    """The argument of `len(x)`, None for anything else."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
    ):
        return node.args[0]
    return None


def set_of(node: ast.expr) -> ast.expr | None:
    """The argument of `set(x)`, None for anything else."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("set", "frozenset")
        and len(node.args) == 1
    ):
        return node.args[0]
    return None


def unwrapped_bool(node: ast.expr) -> ast.expr:
    """`bool(x)` read as `x`: as a test, both hold together."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "bool"
        and len(node.args) == 1
        and not node.keywords
    ):
        node = node.args[0]
    return node


def getattr_as_attribute(node: ast.expr) -> ast.expr:
    """`getattr(o, "name", default)` read as `o.name` (what the guard is about)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) in (2, 3)
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and node.args[1].value.isidentifier()
    ):
        return ast.Attribute(node.args[0], node.args[1].value, ast.Load())
    return node


def modulo(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """(a, b) of `a % b`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return node.left, node.right
    return None


def bound(op: ast.cmpop, n: float) -> str:
    """`x > 0` -> "positive", `x <= 4` -> "at most 4"."""
    if n == 0:
        return {
            ast.Lt: "negative",
            ast.LtE: "zero or negative",
            ast.Gt: "positive",
            ast.GtE: "zero or more",
        }[type(op)]  # type: ignore[index]
    v = num(n)
    return {
        ast.Lt: f"less than {v}",
        ast.LtE: f"at most {v}",
        ast.Gt: f"more than {v}",
        ast.GtE: f"at least {v}",
    }[type(op)]  # type: ignore[index]
