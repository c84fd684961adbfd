"""What the `except` handlers around a raise do with it: re-raise, or log and go on.

An error raised inside a `try` whose handler catches it, logs a warning and carries on never
reaches the user as a crash: they see the warning and a fallback. The guard chain records, for a
raise in a `try` body, each handler's classes and what it does, so that the entry can say so.
The text is `try: except A, B -> logs; except C -> raises` (`TRY_HANDLED`; read back by
`knowledge.who.swallowed`); a `try` without handlers stays `try`.
"""

from __future__ import annotations

import ast

TRY = "try"
TRY_HANDLED = "try: "
_LOGGERS = ("log", "logger", "logging", "warnings", "warn", "print", "_log", "LOG", "LOGGER")


def _action(handler: ast.ExceptHandler) -> str:
    """`raises` when the handler raises again, else `logs` or `continues`."""
    logs = False
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return "raises"
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if func.split(".")[0] in _LOGGERS or func.startswith(("warnings.", "logging.")):
                logs = True
    return "logs" if logs else "continues"


def _classes(handler: ast.ExceptHandler) -> str:
    if handler.type is None:
        return "BaseException"
    if isinstance(handler.type, ast.Tuple):
        return ", ".join(ast.unparse(e) for e in handler.type.elts)
    return ast.unparse(handler.type)


def try_marker(node: ast.Try | ast.TryStar) -> str:
    """The guard text of a raise in the body of `node`: its handlers and what each does."""
    if not node.handlers:
        return TRY
    parts = [f"except {_classes(h)} -> {_action(h)}" for h in node.handlers]
    return TRY_HANDLED + "; ".join(parts)
