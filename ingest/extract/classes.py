"""The class statements of a module, with their bases: the raw material of the exception
hierarchy that `ingest.hierarchy` resolves for a whole snapshot.

Only classes at module level and inside class bodies are read, never those inside functions:
extraction by units (`ingest.extract.incremental`) hides function bodies, and both ways of
extracting a file must give the same records.
"""

from __future__ import annotations

import ast

from errkb.core.records import ClassDef


def base_name(base: ast.expr) -> str | None:
    """The class a base expression names: `Base`, `mod.Base`, `Generic[T]` -> its last name."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Name):
        return base.id
    if isinstance(base, ast.Attribute):
        return base.attr
    return None


def class_defs(body: list[ast.stmt]) -> tuple[ClassDef, ...]:
    """Every class with a base in `body` and the class bodies inside it, in source order."""
    out: list[ClassDef] = []
    stack = [body]
    while stack:
        for stmt in stack.pop():
            if isinstance(stmt, ast.ClassDef):
                bases = tuple(n for n in map(base_name, stmt.bases) if n is not None)
                if bases:
                    out.append(ClassDef(stmt.name, bases))
                stack.append(stmt.body)
            elif isinstance(stmt, (ast.If, ast.Try, ast.TryStar)):  # `try: import` fallbacks
                stack.extend(b for b in _blocks(stmt))
    return tuple(out)


def _blocks(stmt: ast.If | ast.Try | ast.TryStar) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
