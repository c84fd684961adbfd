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
class _Link:
    """A guard link, turned into a `Condition` only for a guard that holds an import (reading the
    test's source costs more than the whole walk)."""

    kind: str  # "if" | "try"
    node: ast.If | ast.Try | ast.TryStar
    holds: bool = True

    def condition(self) -> Condition:
        if isinstance(self.node, ast.If):
            return Condition("if", ast.unparse(self.node.test), self.holds, self.node.lineno)
        catching = _catching(self.node.handlers)
        assert catching is not None
        handler, caught = catching
        resolved = ((f"except {caught}", _fallback(handler)),)
        return Condition("try", "try", True, self.node.lineno, resolved)


@dataclass(frozen=True)
class _Guard:
    links: tuple[_Link, ...] = ()
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
    read: dict[tuple[int, bool], Condition] = {}
    sites = [
        s
        for node, guard in _walk(tree.body, _Guard())
        for s in _sites(node, guard, lines, path, own, read)
    ]
    return sorted(sites, key=lambda s: (s.line, s.exception, s.template.normalized))


def _walk(
    body: list[ast.stmt], guard: _Guard
) -> Iterator[tuple[ast.Import | ast.ImportFrom, _Guard]]:
    """Every import statement with the guard around it."""
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            yield stmt, guard
        elif isinstance(stmt, ast.If):
            if not _type_checking(stmt.test):
                yield from _walk(stmt.body, _with(guard, _Link("if", stmt, True)))
            yield from _walk(stmt.orelse, _with(guard, _Link("if", stmt, False)))
        elif isinstance(stmt, ast.Try | ast.TryStar):
            catches = _catching(stmt.handlers) is not None
            yield from _walk(stmt.body, _with(guard, _Link("try", stmt)) if catches else guard)
            for h in stmt.handlers:
                yield from _walk(h.body, guard)
            yield from _walk(stmt.orelse + stmt.finalbody, guard)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = stmt.name if guard.qualname == "<module>" else f"{guard.qualname}.{stmt.name}"
            yield from _walk(stmt.body, _Guard(guard.links, name, guard.first_line))
        elif isinstance(stmt, ast.With | ast.AsyncWith | ast.For | ast.AsyncFor | ast.While):
            yield from _walk(stmt.body, guard)
            yield from _walk(getattr(stmt, "orelse", []), guard)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _walk(case.body, guard)


def _type_checking(test: ast.expr) -> bool:
    """True for `if TYPE_CHECKING:` (also `typing.TYPE_CHECKING`, or within an `and`)."""
    return any(
        (isinstance(n, ast.Name) and n.id == "TYPE_CHECKING")
        or (isinstance(n, ast.Attribute) and n.attr == "TYPE_CHECKING")
        for n in ast.walk(test)
    )


def _with(guard: _Guard, link: _Link) -> _Guard:
    first = guard.first_line if guard.first_line is not None else link.node.lineno
    return _Guard((*guard.links, link), guard.qualname, first)


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
    read: dict[tuple[int, bool], Condition],
) -> Iterator[Site]:
    """The sites of one import statement; `read` keeps the guard links read so far."""
    if isinstance(node, ast.ImportFrom):
        if node.level or node.module is None or not is_external(node.module, own):
            return
        modules = [node.module]
    else:
        modules = [a.name for a in node.names if is_external(a.name, own)]
        if not modules:
            return
    messages: dict[str, tuple[str, str]] = {}  # message -> (exception, what is missing)
    for module in modules:
        for missing in (module.split(".", 1)[0], module):
            messages.setdefault(module_message(missing), (MISSING, missing))
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                messages[name_message(alias.name, modules[0])] = (NAME_MISSING, alias.name)
    conditions = tuple(_read(link, read) for link in guard.links)
    end = node.end_lineno or node.lineno
    top = (guard.first_line if guard.first_line is not None else node.lineno) - 2
    first = max(1, top, node.lineno - 30)
    snippet = Snippet(first, lines.window(first, min(len(lines), end + 4)), node.lineno, end)
    statement = lines.segment(node)
    for message, (exception, missing) in messages.items():
        yield Site(
            exception=exception,
            template=Template((Segment("text", message),), "literal"),
            path=path,
            line=node.lineno,
            end_line=end,
            qualname=guard.qualname,
            conditions=conditions,
            snippet=snippet,
            raise_source=statement,
            kind="import",
            check=missing,
        )


def _read(link: _Link, read: dict[tuple[int, bool], Condition]) -> Condition:
    """A guard link's condition, read once per file."""
    key = (id(link.node), link.holds)
    found = read.get(key)
    if found is None:
        found = read[key] = link.condition()
    return found
