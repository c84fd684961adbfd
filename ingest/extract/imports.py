"""Import sites: every import of a module outside the project, as the errors it can raise.

A failed import has no `raise` statement, yet it is the error sglang users meet most. Each
`import X` and `from X import Y` of a module that is neither the project's own (`own`, from the
pins), relative, nor in the standard library becomes sites of the errors Python raises for it:
`ModuleNotFoundError: No module named 'X'` (the top-level module; and the submodule, which an old
release of X lacks), and `ImportError: cannot import name 'Y' from 'X'` for each name taken from
a module. An import under `if TYPE_CHECKING:` never runs and has none.

The guard is kept as conditions: the `if` tests around the import (a platform or availability
check), and a `try` whose handler catches the failure, with what that handler does instead (the
fallback) in the condition's `resolved` pair `("except <classes>", "<handler's first lines>")`.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from errkb.core.records import Condition, Segment, Site, Snippet, Template
from errkb.ingest.extract.source import SourceLines

MISSING = "ModuleNotFoundError"
NAME_MISSING = "ImportError"
# What a handler must catch for an import inside its `try` to be guarded.
CATCHING = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}
)
FALLBACK_LINES = 3  # lines of a handler kept as the fallback
_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class _Guard:
    conditions: tuple[Condition, ...] = ()
    qualname: str = "<module>"
    first_line: int | None = None  # the outermost guard's line, where the snippet starts


def module_message(module: str) -> str:
    """The message Python gives when `module` cannot be found."""
    return f"No module named '{module}'"


def name_message(name: str, module: str) -> str:
    """The message Python gives when `module` has no `name`."""
    return f"cannot import name '{name}' from '{module}'"


def is_external(module: str, own: tuple[str, ...]) -> bool:
    """True for a module outside the project and the standard library."""
    top = module.split(".", 1)[0]
    return bool(top) and top not in own and top not in _STDLIB


def import_sites(
    tree: ast.Module, lines: SourceLines, path: str, own: tuple[str, ...]
) -> list[Site]:
    """The import sites of one parsed file, in line order."""
    sites = [
        s
        for node, guard in _walk(tree.body, _Guard(), lines)
        for s in _sites(node, guard, lines, path, own)
    ]
    return sorted(sites, key=lambda s: (s.line, s.exception, s.template.normalized))


def _walk(
    body: list[ast.stmt], guard: _Guard, lines: SourceLines
) -> Iterator[tuple[ast.Import | ast.ImportFrom, _Guard]]:
    """Every import statement with the guard around it."""
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            yield stmt, guard
        elif isinstance(stmt, ast.If):
            if "TYPE_CHECKING" in ast.unparse(stmt.test):
                yield from _walk(
                    stmt.orelse,
                    _with(guard, Condition("if", ast.unparse(stmt.test), False, stmt.lineno)),
                    lines,
                )
                continue
            test = ast.unparse(stmt.test)
            yield from _walk(
                stmt.body, _with(guard, Condition("if", test, True, stmt.lineno)), lines
            )
            yield from _walk(
                stmt.orelse, _with(guard, Condition("if", test, False, stmt.lineno)), lines
            )
        elif isinstance(stmt, ast.Try | ast.TryStar):
            catching = _catching(stmt.handlers)
            inner = guard
            if catching is not None:
                handler, caught = catching
                fallback = _fallback(handler)
                inner = _with(
                    guard,
                    Condition("try", "try", True, stmt.lineno, ((f"except {caught}", fallback),)),
                )
            yield from _walk(stmt.body, inner, lines)
            for h in stmt.handlers:
                yield from _walk(h.body, guard, lines)
            yield from _walk(stmt.orelse + stmt.finalbody, guard, lines)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = stmt.name if guard.qualname == "<module>" else f"{guard.qualname}.{stmt.name}"
            yield from _walk(stmt.body, _Guard(guard.conditions, name, guard.first_line), lines)
        elif isinstance(stmt, ast.With | ast.AsyncWith | ast.For | ast.AsyncFor | ast.While):
            yield from _walk(stmt.body, guard, lines)
            yield from _walk(getattr(stmt, "orelse", []), guard, lines)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _walk(case.body, guard, lines)


def _with(guard: _Guard, condition: Condition) -> _Guard:
    first = guard.first_line if guard.first_line is not None else condition.line
    return _Guard((*guard.conditions, condition), guard.qualname, first)


def _catching(handlers: list[ast.ExceptHandler]) -> tuple[ast.ExceptHandler, str] | None:
    """The first handler that catches a failed import, with the classes it names."""
    for h in handlers:
        if h.type is None:
            return h, "(any exception)"
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        spelled = [ast.unparse(n) for n in names]
        if any(s.rsplit(".", 1)[-1] in CATCHING for s in spelled):
            return h, ", ".join(spelled)
    return None


def _fallback(handler: ast.ExceptHandler) -> str:
    """What the handler does instead of the import: its statements, one short line each
    (`name = None`, `from x import y`, `def name(...)`, `logger.warning(...)`, `raise X(...)`)."""
    said = [_statement(stmt) for stmt in handler.body[:FALLBACK_LINES]]
    if len(handler.body) > FALLBACK_LINES:
        said.append("...")
    return "\n".join(said)


def _statement(stmt: ast.stmt) -> str:
    """One statement in one short line."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return f"def {stmt.name}(...)"
    if isinstance(stmt, ast.ClassDef):
        return f"class {stmt.name}"
    if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call):
        return f"raise {ast.unparse(stmt.exc.func)}(...)"
    text = ast.unparse(stmt).split("\n", 1)[0]
    if isinstance(stmt, ast.If | ast.Try | ast.With | ast.For | ast.While):
        return text.rstrip(":") + ": ..."
    return text if len(text) <= 80 else text[:77] + "..."


def _sites(
    node: ast.Import | ast.ImportFrom,
    guard: _Guard,
    lines: SourceLines,
    path: str,
    own: tuple[str, ...],
) -> Iterator[Site]:
    """The sites of one import statement."""
    if isinstance(node, ast.ImportFrom):
        if node.level or node.module is None or not is_external(node.module, own):
            return
        modules = [node.module]
    else:
        modules = [a.name for a in node.names if is_external(a.name, own)]
    statement = lines.segment(node)
    seen: set[str] = set()
    for module in modules:
        top = module.split(".", 1)[0]
        for missing in (top, module):
            if missing not in seen:
                seen.add(missing)
                yield _site(
                    MISSING, module_message(missing), node, guard, lines, path, statement, missing
                )
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                yield _site(
                    NAME_MISSING,
                    name_message(alias.name, modules[0]),
                    node,
                    guard,
                    lines,
                    path,
                    statement,
                    alias.name,
                )


def _site(
    exception: str,
    message: str,
    node: ast.stmt,
    guard: _Guard,
    lines: SourceLines,
    path: str,
    statement: str,
    check: str,
) -> Site:
    end = node.end_lineno or node.lineno
    top = (guard.first_line if guard.first_line is not None else node.lineno) - 2
    first = max(1, top, node.lineno - 30)
    last = min(len(lines), end + 4)
    return Site(
        exception=exception,
        template=Template((Segment("text", message),), "literal"),
        path=path,
        line=node.lineno,
        end_line=end,
        qualname=guard.qualname,
        conditions=guard.conditions,
        snippet=Snippet(first, lines.window(first, last), node.lineno, end),
        raise_source=statement,
        kind="import",
        check=check,
    )
