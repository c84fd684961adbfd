"""What one module says about its functions and classes, for following values across modules.

For each function: its parameters (with annotations) and the expressions its locals are assigned;
for each class: its bases, its annotated fields, and every `self.x = ...` its methods make. Read
from the syntax tree once per distinct file content (`ModuleFacts.of`), never by importing.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_right
from dataclasses import dataclass, field

IMPORT_FAILED = "\x02"  # marks a module-level value set where a package's import failed
SET_WHEN = "\x03"  # marks the module-level `if` test under which a module-level name is set
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
MAX_EXPR = 300  # characters of an assigned expression kept (longer ones say little here)


@dataclass(frozen=True)
class Func:
    """One function or method: where it is, its parameters and its locals' assigned values."""

    qualname: str
    owner: str  # the enclosing class's name, "" for a plain function
    params: tuple[str, ...]
    annotations: tuple[tuple[str, str], ...]
    start: int
    end: int
    locals: tuple[tuple[str, str], ...] = ()  # (name, assigned expression source), in order
    returns: tuple[str, ...] = ()  # the expressions its `return` statements give
    defaults: tuple[tuple[str, str], ...] = ()  # (parameter, its default's source)
    star: tuple[str, str] = ("", "")  # the names of its `*args` and `**kwargs`, "" when none
    return_tests: tuple[str, ...] = ()  # the `if` tests its `return` statements stand under

    def annotation(self, name: str) -> str:
        """The annotation source of a parameter ("" when it has none)."""
        return next((a for n, a in self.annotations if n == name), "")

    def default(self, name: str) -> str | None:
        """The source of a parameter's default, None when it has none."""
        return next((d for n, d in self.defaults if n == name), None)

    def local(self, name: str) -> list[str]:
        """Every expression assigned to a local name."""
        return [v for n, v in self.locals if n == name]


@dataclass
class ModuleFacts:
    """The functions and classes of one module."""

    funcs: dict[str, Func] = field(default_factory=dict)
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # "Class.attr" -> (method qualname, assigned expression source, the `if` tests around it)
    assigns: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    fields: dict[str, dict[str, str]] = field(default_factory=dict)  # class -> name -> annotation
    # `try` bodies: (first line, last line, the classes caught, what the handler does:
    # "raises", "logs" or "goes on")
    tries: list[tuple[int, int, tuple[str, ...], str]] = field(default_factory=list)
    # module-level names -> the expressions assigned to them; one assigned where an import of
    # a package fails (`except ImportError: x = None`) is IMPORT_FAILED + the package's name
    globals: dict[str, list[str]] = field(default_factory=dict)
    _starts: list[int] = field(default_factory=list)
    _by_start: list[Func] = field(default_factory=list)

    @classmethod
    def of(cls, text: str) -> ModuleFacts:
        """The facts of a module's text (empty when it does not parse)."""
        facts = cls()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return facts
        try:
            _Collector(facts, _Source(text)).visit(tree)
        except RecursionError:
            return cls()
        facts._order()
        return facts

    def _order(self) -> None:
        ordered = sorted(self.funcs.values(), key=lambda f: (f.start, -f.end))
        self._starts = [f.start for f in ordered]
        self._by_start = ordered

    def func_at(self, line: int) -> Func | None:
        """The innermost function whose body holds the line."""
        i = bisect_right(self._starts, line)
        best: Func | None = None
        for f in reversed(self._by_start[:i]):
            if f.start <= line <= f.end and (best is None or f.start > best.start):
                best = f
                break
        return best

    def catching(self, line: int, exception: str) -> str:
        """What a `try` around the line does with that exception ("" when none catches it)."""
        for start, end, names, action in self.tries:
            if start <= line <= end and action != "raises":
                if exception in names or {"Exception", "BaseException"} & set(names):
                    return action
        return ""

    def methods_named(self, name: str) -> list[Func]:
        """Functions and methods of this module called `name`."""
        return [f for f in self.funcs.values() if f.qualname.rsplit(".", 1)[-1] == name]


class _Source:
    """Slices of a module's text by node position (cheaper than unparsing each node)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)

    def of(self, node: ast.AST) -> str:
        """The node's source, "" when longer than `MAX_EXPR` (it says little here)."""
        lineno, end = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0)
        if not lineno or not end or end - lineno > 6:
            return ""
        a = self.starts[lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        b = self.starts[end - 1] + (node.end_col_offset or 0)  # type: ignore[attr-defined]
        return self.text[a:b] if 0 < b - a <= MAX_EXPR else ""


# Statements with bodies of statements: only statements are walked, never expressions (a
# tenth of the nodes), which is what makes reading every module of a release affordable.
_BODIES = ("body", "orelse", "finalbody", "handlers")


class _Collector:
    def __init__(self, facts: ModuleFacts, source: _Source) -> None:
        self.facts = facts
        self.src = source.of
        self.scope: list[str] = []
        self.classes: list[str] = []
        self.func: list[tuple[str, list[tuple[str, str]]]] = []
        self.returns: list[list[str]] = []
        self.return_tests: list[list[str]] = []  # the `if` tests around each function's returns
        self.tests: list[str] = []  # the `if` tests around the statement, in its function
        self.failed: list[str] = []  # the packages whose failed import the statement handles

    def visit(self, node: ast.AST) -> None:
        """Walk the statements of a module."""
        self.statements(getattr(node, "body", []))

    def statements(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, node: ast.stmt | ast.excepthandler | ast.match_case) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self._function(node)
        elif isinstance(node, ast.ClassDef):
            self._class(node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                self._assigned(t, node.value)
        elif isinstance(node, ast.AnnAssign):
            self._assigned(node.target, node.value)
        elif isinstance(node, ast.Return):
            if self.returns and node.value is not None:
                self.returns[-1].append(self.src(node.value))
                tests = " and ".join(t for t in self.tests[-2:] if t)
                if tests and tests not in self.return_tests[-1]:
                    self.return_tests[-1].append(tests)
        elif isinstance(node, ast.If):
            self.tests.append(self.src(node.test))
            self.statements(node.body)
            self.tests[-1] = f"not ({self.tests[-1]})" if self.tests[-1] else ""
            self.statements(node.orelse)
            self.tests.pop()
        elif isinstance(node, ast.Try | ast.TryStar) and node.body:
            self._try(node)
            for name in _BODIES:
                for child in getattr(node, name, ()) or ():
                    if name == "handlers" and not self.func and _catches_import(child):
                        self.failed.append(_imported_package(node.body))
                        self.statement(child)
                        self.failed.pop()
                    else:
                        self.statement(child)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self._assigned(node.target, node.iter, each=True)  # a loop's name: the iterable's
            for name in _BODIES:
                for child in getattr(node, name, ()) or ():
                    self.statement(child)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:  # `with open(p) as f`: `f` comes from `open(p)`
                if item.optional_vars is not None:
                    self._assigned(item.optional_vars, item.context_expr)
            self.statements(node.body)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                self.statements(case.body)
        else:
            for name in _BODIES:
                for child in getattr(node, name, ()) or ():
                    self.statement(child)

    def _try(self, node: ast.Try | ast.TryStar) -> None:
        for h in node.handlers:
            types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type else []
            names = tuple(
                t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "") for t in types
            ) or ("BaseException",)
            action = "goes on"
            for stmt in h.body:
                if isinstance(stmt, ast.Raise):
                    action = "raises"
                    break
                text = self.src(stmt)
                if "log" in text or "warn" in text or "print(" in text:
                    action = "logs"
            end = node.body[-1].end_lineno or node.body[-1].lineno
            self.facts.tries.append((node.body[0].lineno, end, names, action))

    def _class(self, node: ast.ClassDef) -> None:
        self.facts.bases[node.name] = tuple(
            b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases
        )
        fields = self.facts.fields.setdefault(node.name, {})
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                fields[stmt.target.id] = self.src(stmt.annotation)
        self.scope.append(node.name)
        self.classes.append(node.name)
        saved, self.tests = self.tests, []
        self.statements(node.body)
        self.tests = saved
        self.classes.pop()
        self.scope.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # a method when the function sits right in a class's body
        owner = self.classes[-1] if self.classes and self.scope[-1:] == self.classes[-1:] else ""
        if not owner and self.func:  # a function nested in a method sees its `self`
            owner = self.func[-1][0]
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        annotations = tuple(
            (p.arg, self.src(p.annotation))
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
            if p.annotation is not None
        )
        positional = (*a.posonlyargs, *a.args)
        defaults = tuple(
            (p.arg, self.src(d))
            for p, d in (
                *zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True),
                *((p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d),
            )
        )
        star = (a.vararg.arg if a.vararg else "", a.kwarg.arg if a.kwarg else "")
        self.scope.append(node.name)
        qualname = ".".join(self.scope)
        local: list[tuple[str, str]] = []
        returns: list[str] = []
        return_tests: list[str] = []
        self.func.append((owner, local))
        self.returns.append(returns)
        self.return_tests.append(return_tests)
        saved, self.tests = self.tests, []
        self.statements(node.body)
        self.tests = saved
        self.returns.pop()
        self.return_tests.pop()
        self.func.pop()
        self.scope.pop()
        self.facts.funcs[qualname] = Func(
            qualname,
            owner,
            tuple(params),
            annotations,
            node.lineno,
            node.end_lineno or node.lineno,
            tuple(local[:200]),
            tuple(r for r in returns[:4] if r),
            defaults,
            star,
            tuple(return_tests[:4]),
        )

    def _assigned(self, target: ast.expr, value: ast.expr | None, each: bool = False) -> None:
        if value is not None and not self.func and not self.classes:
            self._global(target, value)
        if value is None or not self.func:
            return
        owner, local = self.func[-1]
        if each:  # `for a, b in xs`: each name comes from the items of `xs`
            names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
            local.extend((t.id, self.src(value)) for t in names if isinstance(t, ast.Name))
        elif isinstance(target, ast.Name):
            local.append((target.id, self.src(value)))
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and owner
        ):
            method = ".".join(self.scope)
            tests = " and ".join(t for t in self.tests[-2:] if t)
            self.facts.assigns.setdefault(f"{owner}.{target.attr}", []).append(
                (method, self.src(value), tests)
            )
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            for t, v in zip(target.elts, value.elts, strict=False):
                self._assigned(t, v)
        elif isinstance(target, ast.Tuple):  # `a, b = f()`: each comes from what `f` gives
            for t in target.elts:
                if isinstance(t, ast.Name):
                    local.append((t.id, self.src(value)))

    def _global(self, target: ast.expr, value: ast.expr) -> None:
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [])
        for t in names:
            if isinstance(t, ast.Name):
                text = IMPORT_FAILED + self.failed[-1] if self.failed else self.src(value)
                assigned = self.facts.globals.setdefault(t.id, [])
                assigned.append(text)
                tests = " and ".join(x for x in self.tests[-2:] if x)
                if tests and not self.failed:  # `if _is_cuda: ... else: f = None`
                    assigned.append(SET_WHEN + tests)


def _catches_import(handler: ast.excepthandler) -> bool:
    """True for `except ImportError` (or ModuleNotFoundError, or a tuple holding one)."""
    kind = getattr(handler, "type", None)
    types = kind.elts if isinstance(kind, ast.Tuple) else [kind] if kind is not None else []
    return any(getattr(t, "id", "") in _IMPORT_ERRORS for t in types)


def _imported_package(body: list[ast.stmt]) -> str:
    """The top package the first absolute import of a `try` body names ("" when none)."""
    for stmt in body:
        if isinstance(stmt, ast.Import) and stmt.names:
            return stmt.names[0].name.split(".")[0]
        if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            return stmt.module.split(".")[0]
    return ""
