"""Which assignment of a name reaches a given statement (a cheap, syntactic reaching-definition).

Messages and guards often go through a local name (`msg = f"..."; raise ValueError(msg)`,
`pd_enabled = ...; if pd_enabled:`). Rather than a full data-flow analysis we run the statements
forward, symbolically, tracking only the one name: an assignment replaces its definition, `+=`
extends it, and a compound statement that binds it yields one definition per way out of it
(`Branches`). Paths where the name stays unbound are dropped, since a raise reached that way would
fail with `UnboundLocalError` instead. Loops are taken as "zero or one pass".

Running forward (instead of searching backwards) keeps the recursion as deep as the blocks are
nested, not as long as the function is, and the definitions before each statement of a block are
memoized so the many raises of one long validation function share the work.

Positions are tuples of (statement list, index) from the scope's body down to the innermost block:
a lookup at a position sees the statements *before* index at each level.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

Position = tuple[tuple[list[ast.stmt], int], ...]

# Blocks nested deeper than this are not followed: it bounds the recursion a hostile file causes.
MAX_NESTING = 60

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
    if isinstance(stmt, (ast.Try, ast.TryStar)):
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
    if isinstance(stmt, (ast.Try, ast.TryStar)):
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
        self._prefixes: dict[tuple[object, ...], list[Definition | None]] = {}
        self._locals: frozenset[str] | None = None
        self._assigned: frozenset[str] | None = None

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
    def assigned_names(self) -> frozenset[str]:
        """Names bound anywhere in this scope's body (parameters excluded)."""
        if self._assigned is None:
            names: set[str] = set()
            for stmt in self.body:
                names |= self.binds(stmt)
            self._assigned = frozenset(names)
        return self._assigned

    @property
    def local_names(self) -> frozenset[str]:
        """Names local to this scope: bound anywhere in its body, or parameters."""
        if self._locals is None:
            names = set(self.assigned_names)
            args = getattr(self.node, "args", None)
            if isinstance(args, ast.arguments):
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                names |= {a.arg for a in every if a is not None}
            self._locals = frozenset(names)
        return self._locals

    def end(self) -> Position:
        """The position after the last statement of the body."""
        return ((self.body, len(self.body)),)

    def lookup(self, name: str, pos: Position) -> Definition | None:
        """The definition of `name` that reaches `pos`, or None when none does."""
        key = (name, *((id(block), index) for block, index in pos))
        if key in self._lookups:
            return self._lookups[key]
        state: Definition | None = None
        for level, (block, index) in enumerate(pos):
            state = self._state_before(name, pos[:level], block, index, state)
        self._lookups[key] = state
        return state

    def _state_before(
        self,
        name: str,
        outer: Position,
        block: list[ast.stmt],
        index: int,
        entry: Definition | None,
    ) -> Definition | None:
        """The definition reaching `block[index]`, given the one reaching the block's start."""
        key = (name, *((id(b), i) for b, i in outer), id(block))
        states = self._prefixes.get(key)
        if states is None:
            states = self._prefixes[key] = [entry]
        while len(states) <= index:
            k = len(states) - 1
            states.append(self._after(name, block[k], states[-1], (*outer, (block, k))))
        return states[index]

    def _run(
        self, name: str, block: list[ast.stmt], state: Definition | None, at: Position
    ) -> Definition | None:
        """The definition after running `block` (nested in the statement at `at`) from `state`."""
        for k, stmt in enumerate(block):
            state = self._after(name, stmt, state, (*at, (block, k)))
        return state

    def _after(
        self, name: str, stmt: ast.stmt, state: Definition | None, at: Position
    ) -> Definition | None:
        """The definition of `name` after `stmt` (at position `at`) runs from `state`."""
        if name not in self.binds(stmt):
            return state
        if isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return Assigned(stmt.value, at)
            return Opaque(stmt)
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            return Assigned(stmt.value, at)
        if isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.op, ast.Add) and isinstance(stmt.target, ast.Name):
                return Augmented(state, stmt.value, at)
            return Opaque(stmt)
        if not child_blocks(stmt) or name in direct_bindings(stmt):
            return Opaque(stmt)
        if len(at) > MAX_NESTING:
            return Opaque(stmt)

        def run(block: list[ast.stmt], start: Definition | None) -> Definition | None:
            return self._run(name, block, start, at)

        if isinstance(stmt, ast.If):
            return _either(run(stmt.body, state), run(stmt.orelse, state))
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            # After zero or more iterations, then the else block.
            return _either(run(stmt.orelse, run(stmt.body, state)), run(stmt.orelse, state))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return run(stmt.body, state)
        if isinstance(stmt, ast.Match):
            return _either(*(run(case.body, state) for case in stmt.cases), state)
        t: ast.Try = stmt  # type: ignore[assignment]  # try / try*
        done = _either(run(t.orelse, run(t.body, state)), *(run(h.body, state) for h in t.handlers))
        return run(t.finalbody, done)


def _either(*options: Definition | None) -> Definition | None:
    """One definition for several paths; paths leaving the name unbound are dropped."""
    unique: dict[int, Definition] = {}
    for option in options:
        if option is not None:
            unique.setdefault(id(option), option)
    if not unique:
        return None
    if len(unique) == 1:
        return next(iter(unique.values()))
    return Branches(tuple(unique.values()))
