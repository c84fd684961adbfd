"""What hardware the code accepts, as the code states it: a compute capability or a platform.

"Run on hardware for which that test does not hold" leaves the reader to decode `not _is_cuda`.
The message often says it ("FlashAttention v3 Backend requires SM>=80 and SM<=90"), and a
capability check states a number (`get_device_capability()[0] < 9` raising means compute
capability 9 or higher is needed): both are quoted or said in words here.
"""

from __future__ import annotations

import ast
import re

from errkb.core.records import Template
from errkb.knowledge.words import message

_HARDWARE_WORDS = re.compile(
    r"\b(?:sm\s*(?:[<>=]=?\s*)?\d{2,3}\w?\+?|compute capabilit(?:y|ies)|hopper|blackwell|ampere|"
    r"volta|turing|gpus?|cuda|rocm|hip|npu|xpu|hpu|mps|cpu|musa|platform|device|gfx\d+)\b(?!-)",
    re.I,
)
_CAPABILITY = re.compile(r"capabilit|get_device_sm|sm_version|device_sm\b", re.I)
_NEEDED = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<", ast.Eq: "!=", ast.NotEq: "=="}
_INVERSE = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "!=", "!=": "=="}
_WORDS = {">=": "or higher", ">": "above", "<=": "or lower", "<": "below"}


def stated(template: Template) -> str | None:
    """The message's sentence about the hardware it needs, if it has one."""
    for s in message.sentences(message.display(template)):
        if _HARDWARE_WORDS.search(s) and (message.is_rule(s) or "support" in s.lower()):
            return s if len(s) <= 200 else s[:199] + "…"
    return None


def _number(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return str(node.value)
    if isinstance(node, ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts
    ):
        return ".".join(str(e.value) for e in node.elts)  # type: ignore[attr-defined]
    return None


def capability(tests: list[ast.expr]) -> str | None:
    """The compute capability a raising capability comparison leaves as needed, in words."""
    for node in tests:
        negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        test = node.operand if isinstance(node, ast.UnaryOp) and negated else node
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            continue
        if not _CAPABILITY.search(ast.unparse(test.left)):
            continue
        value, needed = _number(test.comparators[0]), _NEEDED.get(type(test.ops[0]))
        if value is None or needed is None:
            continue
        if negated:
            needed = _INVERSE[needed]
        if needed in ("==", "!="):
            return f"compute capability {'other than ' if needed == '!=' else ''}{value}"
        return f"compute capability {value} {_WORDS[needed]} (`{ast.unparse(node)}` raises)"
    return None
