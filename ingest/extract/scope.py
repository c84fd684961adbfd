"""Which assignment of a name reaches a given statement (a cheap, syntactic reaching-definition).

Messages and guards often go through a local name (`msg = f"..."; raise ValueError(msg)`,
`pd_enabled = ...; if pd_enabled:`). Rather than a full data-flow analysis we walk the statement
lists backwards from the point of use, and through the blocks that enclose it: the first statement
that binds the name decides. A compound statement that binds it in some branches yields one
definition per branch (`Branches`); a branch where the name stays unbound is dropped by the
template code, since a raise reached that way would fail with `UnboundLocalError` instead.

Positions are tuples of (statement list, index) from the scope's body down to the innermost block:
the name is looked up among the statements *before* index at each level.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

Position = tuple[tuple[list[ast.stmt], int], ...]

# A message built through more nested lookups than this is left as a placeholder: it bounds the
# work (and the recursion) a hostile file can cause.
MAX_LOOKUP_DEPTH = 40

_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True, eq=False)
class Assigned:
    """`name = value` (or `name: T = value`) at `pos`."""

    value: ast.expr
    pos: Position


@dataclass(frozen=True, eq=False)
class Augmented:
    """`name += value` at `pos`, on top of the earlier definition `prev` (None if unbound)."""

    prev: Definition | None
    value: ast.expr
    pos: Position


@dataclass(frozen=True, eq=False)
class Branches:
    """The name is bound differently on different paths; None where it stays unbound."""

    options: tuple[Definition | None, ...]


@dataclass(frozen=True, eq=False)
class Opaque:
    """Bound in a way we do not follow (loop target, import, tuple unpacking, `as` name...)."""

    node: ast.AST


Definition = Assigned | Augmented | Branches | Opaque


def _target_names(target: ast.expr) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _pattern_names(pattern: ast.pattern) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(pattern):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def direct_bindings(stmt: ast.stmt) -> set[str]:
    """Names a statement binds itself, not counting the statements nested in its blocks."""
    if isinstance(stmt, ast.Assign):
        return set().union(*(_target_names(t) for t in stmt.targets))
    if isinstance(stmt, ast.AugAssign):
        return _target_names(stmt.target)
    if isinstance(stmt, ast.AnnAssign):  # a bare annotation `x: int` binds nothing
        return _target_names(stmt.target) if stmt.value is not None else set()
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return _target_names(stmt.target)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        names: set[str] = set()
        for item in stmt.items:
            if item.optional_vars is not None:
                names |= _target_names(item.optional_vars)
        return names
    if isinstance(stmt, _SCOPE_NODES):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.Delete):
        return set().union(*(_target_names(t) for t in stmt.targets))
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return {h.name for h in stmt.handlers if h.name}  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return set().union(*(_pattern_names(c.pattern) for c in stmt.cases))
    return set()


def child_blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists nested directly in a compound statement (not in nested scopes)."""
    if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        t = stmt  # type: ignore[assignment]
        return [t.body, *(h.body for h in t.handlers), t.orelse, t.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [c.body for c in stmt.cases]
    return []


class Scope:
    """One function, class or module body and the name bindings inside it."""

    def __init__(
        self,
        node: ast.AST,
        body: list[ast.stmt],
        parent: Scope | None = None,
        parent_pos: Position = (),
        owner_class: Scope | None = None,
    ) -> None:
        self.node = node
        self.body = body
        self.parent = parent  # lexically enclosing scope
        self.parent_pos = parent_pos  # where this scope's def statement sits in the parent
        self.owner_class = owner_class  # for a method: the class body scope (self./cls. lookups)
        self._binds: dict[int, frozenset[str]] = {}
        self._lookups: dict[tuple[object, ...], Definition | None] = {}
        self._locals: frozenset[str] | None = None

    @property
    def is_function(self) -> bool:
        """True for function bodies (class bodies do not enclose their methods' names)."""
        return isinstance(self.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))

    def binds(self, stmt: ast.stmt) -> frozenset[str]:
        """Every name bound by a statement, including inside its nested blocks."""
        key = id(stmt)
        found = self._binds.get(key)
        if found is None:
            names = direct_bindings(stmt)
            for block in child_blocks(stmt):
                for child in block:
                    names |= self.binds(child)
            found = self._binds[key] = frozenset(names)
        return found

    @property
    def local_names(self) -> frozenset[str]:
        """Names local to this scope: bound anywhere in its body, or parameters."""
        if self._locals is None:
            names: set[str] = set()
            for stmt in self.body:
                names |= self.binds(stmt)
            args = getattr(self.node, "args", None)
            if isinstance(args, ast.arguments):
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                names |= {a.arg for a in every if a is not None}
            self._locals = frozenset(names)
        return self._locals

    def end(self) -> Position:
        """The position after the last statement of the body."""
        return ((self.body, len(self.body)),)

    def lookup(self, name: str, pos: Position, depth: int = 0) -> Definition | None:
        """The definition of `name` that reaches `pos`, or None when none does."""
        key = (name, *((id(block), index) for block, index in pos))
        if key in self._lookups:
            return self._lookups[key]
        if depth > MAX_LOOKUP_DEPTH:
            return Opaque(self.node)
        result: Definition | None = None
        for level in range(len(pos) - 1, -1, -1):
            block, index = pos[level]
            outer = pos[:level]
            for j in range(index - 1, -1, -1):
                result = self._bound_by(name, block[j], (*outer, (block, j)), depth)
                if result is not None:
                    break
            if result is not None:
                break
        self._lookups[key] = result
        return result

    def _bound_by(self, name: str, stmt: ast.stmt, at: Position, depth: int) -> Definition | None:
        """How `stmt` (at position `at`) binds `name`, or None when it does not."""
        if name not in self.binds(stmt):
            return None
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return Assigned(stmt.value, at)
            return Opaque(stmt)
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            return Assigned(stmt.value, at)
        if isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
                return Augmented(self.lookup(name, at, depth + 1), stmt.value, at)
            return Opaque(stmt)
        if not child_blocks(stmt) or name in direct_bindings(stmt):
            return Opaque(stmt)
        options: dict[int, Definition] = {}
        for block in _paths_out(stmt, name, self):
            inner = (*at, (block, len(block))) if block else at
            found = self.lookup(name, inner, depth + 1)
            if found is not None:
                options.setdefault(id(found), found)
        return Branches(tuple(options.values()) or (None,))


def _paths_out(stmt: ast.stmt, name: str, scope: Scope) -> list[list[ast.stmt]]:
    """The blocks control may leave `stmt` through; an empty list stands for "none ran"."""
    none_ran: list[ast.stmt] = []
    if isinstance(stmt, ast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return [stmt.body, stmt.orelse, none_ran]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Match):
        return [*(c.body for c in stmt.cases), none_ran]
    t = stmt  # a try statement
    finalbody: list[ast.stmt] = t.finalbody  # type: ignore[attr-defined]
    if any(name in scope.binds(s) for s in finalbody):
        return [finalbody]
    orelse: list[ast.stmt] = t.orelse  # type: ignore[attr-defined]
    ok = orelse if any(name in scope.binds(s) for s in orelse) else t.body  # type: ignore[attr-defined]
    return [ok, *(h.body for h in t.handlers)]  # type: ignore[attr-defined]
