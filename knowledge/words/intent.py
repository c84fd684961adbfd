"""What kind of problem an error reports, and who is in a position to hit it.

The intent is read from the guard's shape first (an `isinstance` test is a wrong type, `x is
None` a missing value, a comparison with a number a range, `x not in choices` an unknown name)
and from the message's words only when the guard does not decide, and only when the guard does
not contradict them. Who hits it is traced from evidence in `knowledge.who.evidence`.
"""

from __future__ import annotations

import ast
from typing import Literal

from errkb.core.records import Template
from errkb.knowledge.words.message import UNSUPPORTED_WORDS

Intent = Literal[
    "unsupported",
    "out_of_range",
    "missing",
    "wrong_type",
    "unknown_choice",
    "mismatch",
    "not_divisible",
    "not_found",
    "deprecated",
    "invalid",
]

INTENT_WORDS: dict[str, str] = {
    "unsupported": "a combination of options, model or hardware this code does not support",
    "out_of_range": "a value outside the accepted range",
    "missing": "a required value that is missing or empty",
    "wrong_type": "a value of the wrong type",
    "unknown_choice": "a name or value that is not one of the accepted ones",
    "mismatch": "two values that must agree but do not",
    "not_divisible": "a size that does not divide evenly as required",
    "not_found": "something required that cannot be found",
    "deprecated": "an option or usage that is no longer accepted",
    "invalid": "a value this code rejects",
}
_MESSAGE: tuple[tuple[Intent, tuple[str, ...]], ...] = (
    ("deprecated", ("deprecated", "no longer supported", "has been removed")),
    ("unsupported", UNSUPPORTED_WORDS),
    ("not_divisible", ("divisible", "multiple of")),
    ("mismatch", ("mismatch", "does not match", "must match", "must be the same", "inconsistent")),
    (
        "wrong_type",
        (
            "must be a ",
            "must be an ",
            "should be a ",
            "expected a ",
            "wrong type",
            "invalid type",
            "instance of",
            "must be of type",
        ),
    ),
    (
        "out_of_range",
        (
            "out of range",
            "greater than",
            "less than",
            "at least",
            "at most",
            "exceeds",
            "too large",
            "too small",
            "must be positive",
            "must be non-negative",
            "must be >",
            "must be <",
            "must be in [",
            "must be in (",
            "between",
        ),
    ),
    (
        "unknown_choice",
        ("unknown", "unrecognized", "choose from", "must be one of", "should be one of", "invalid"),
    ),
    ("not_found", ("not found", "does not exist", "no such", "cannot find", "could not find")),
    ("missing", ("required", "must be set", "must be specified", "must be provided", "empty")),
)


def _guard_intent(node: ast.expr) -> Intent | None:
    """The intent a conjunct's shape decides, or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.Call) and getattr(inner.func, "id", "") == "isinstance":
            return "wrong_type"
        if isinstance(inner, ast.Compare) and len(inner.ops) == 2:
            return "out_of_range"
        if isinstance(inner, ast.Name | ast.Attribute):
            return None  # `not x`: empty, false or missing; the message decides
        return None
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
        return "wrong_type"
    if not isinstance(node, ast.Compare):
        return None
    op, right = node.ops[-1], node.comparators[-1]
    left = node.left
    if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None:
        return "missing"
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod):
        return "not_divisible"
    if isinstance(op, ast.NotIn) and not isinstance(right, ast.Constant):
        return "unknown_choice"
    is_num = isinstance(right, ast.Constant) and isinstance(right.value, int | float)
    is_num = is_num or (isinstance(right, ast.UnaryOp) and isinstance(right.operand, ast.Constant))
    if isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) and is_num:
        if isinstance(left, ast.Call) and getattr(left.func, "id", "") == "len":
            return "missing" if _zero(right) else "out_of_range"
        return "out_of_range"
    if isinstance(op, ast.NotEq) and not isinstance(right, ast.Constant):
        return "mismatch"
    return None


def _zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (0, 1)


def _message_intent(template: Template) -> Intent | None:
    low = " " + " ".join(template.literal_text.lower().split()) + " "
    for intent, words in _MESSAGE:
        if any(w in low for w in words):
            return intent
    if low.lstrip().startswith("no "):
        return "missing"
    return None


def intent(template: Template, last_group: list[ast.expr]) -> Intent | None:
    """The message's intent, from the innermost guard's shape, else from the message's words."""
    shapes = {i for n in last_group if (i := _guard_intent(n)) is not None}
    said = _message_intent(template)
    if len(shapes) == 1:
        shape = next(iter(shapes))
        # The message may be more precise than the shape (a range test reported as a choice).
        compatible = {
            "out_of_range": {"out_of_range", "not_divisible", "unsupported"},
            "missing": {"missing", "not_found"},
            "unknown_choice": {"unknown_choice", "unsupported", "not_found"},
            "mismatch": {"mismatch", "not_divisible", "unsupported"},
            "wrong_type": {"wrong_type", "unsupported"},
        }.get(shape, {shape})
        return said if said in compatible else shape
    if (
        said == "out_of_range"
        and last_group
        and not any(isinstance(n, ast.Compare) for n in last_group)
    ):
        return "invalid"  # range words without a comparison in the guard: do not claim a range
    return said
