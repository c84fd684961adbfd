"""Text a placeholder's source shows: literals that the printed message may consist of.

A template keeps every part only known at run time as a placeholder holding its source
expression. Some of those expressions hold the very text a user sees:
- a fallback, `failure_reason or "Failed due to an unknown reason from another rank"`: the
  message whenever no reason was recorded;
- a literal passed beside another argument, `KVTransferError(room, "NIXL KVSender Exception")`:
  a project's class usually prints that literal alone, not the tuple of its arguments;
- the arms of a conditional, `"out of memory" if oom else "timed out"`.

Each such literal, long enough to tell errors apart, is an alternative form of the entry's
message (see `index.compile_entry`): matched on its own, as if it were the whole message.
"""

from __future__ import annotations

import ast

from errkb.service.match.matcher.normalize import squeeze

MIN_SQUEEZED = 16  # characters without spaces: shorter literals ("auto", "cuda") tell nothing
MIN_WORDS = 3
_MAX_EXPRESSION = 2_000  # placeholder sources longer than this are not parsed


def shown_literals(placeholder: str) -> list[str]:
    """The message-like literals of one placeholder's source expression, in source order."""
    if "'" not in placeholder and '"' not in placeholder or len(placeholder) > _MAX_EXPRESSION:
        return []
    try:
        expr = ast.parse(placeholder, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = [c.value for c in _shown(expr) if isinstance(c.value, str)]
    return [t for t in found if len(squeeze(t)) >= MIN_SQUEEZED and len(t.split()) >= MIN_WORDS]


def _shown(expr: ast.expr) -> list[ast.Constant]:
    """Constants the expression may evaluate to as a whole."""
    if isinstance(expr, ast.Constant):
        return [expr]
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return [c for v in expr.values for c in _shown(v)]
    if isinstance(expr, ast.IfExp):
        return [*_shown(expr.body), *_shown(expr.orelse)]
    return []
