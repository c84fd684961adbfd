"""The guard chain of a raise: the tests that must hold (or fail) for control to reach it.

The site walker records how each enclosing block was entered (`BlockEntry`); from that path this
module derives one `Condition` per enclosing `if`/`elif`/`else`, loop, `try`/`except`, `with` and
`match`/`case`, outermost first, stopping at the enclosing function (a nested function's raise is
not guarded by its parent's `if`s at call time). An earlier `if cond: return|continue|break` in an
enclosing block is also a guard (`not cond` held); an earlier `if cond: raise ...` is not included:
in validation code that is a sibling check with its own entry, and listing every one would bury the
guards that matter.

Local names read by a condition are resolved to the single assignment that reaches the test, so
`if pd_enabled:` explains itself (`pd_enabled` -> `get_disagg().disaggregation_mode != 'null'`).
In a method, `self.name` is resolved to what the class assigns it (`self.tp_size` ->
`server_args.tp_size`), so a value copied into the object can be traced to its input; and a
parameter of a module-level function or a method to what its callers in the module pass.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Callable, Mapping
from typing import NamedTuple

from errkb.core.records import Condition, ConditionKind
from errkb.ingest.extract.handlers import try_marker
from errkb.ingest.extract.scope import Assigned, Position, Scope


class BlockEntry(NamedTuple):
    """How a block was entered: the compound statement, which branch, and the handler or case."""

    node: ast.stmt
    branch: str  # body | orelse | handler | finalbody | case
    item: ast.AST | None = None


class PathStep(NamedTuple):
    """One level of the path to a statement: the block, the index in it, and how it was entered."""

    block: list[ast.stmt]
    at: int
    entry: BlockEntry | None


_EXITS = (ast.Return, ast.Continue, ast.Break)


def position(frames: tuple[PathStep, ...] | list[PathStep]) -> Position:
    """The lookup position of the statement the frames lead to."""
    return tuple((f.block, f.at) for f in frames)


def _is_elif(node: ast.stmt, outer: PathStep) -> bool:
    """True when `node` is written `elif` (the lone statement of its parent `if`'s else)."""
    entry = outer.entry
    return (
        entry is not None
        and entry.branch == "orelse"
        and isinstance(entry.node, ast.If)
        and len(outer.block) == 1
        and outer.block[0] is node
        and node.col_offset == entry.node.col_offset
    )


def _loop_text(node: ast.For | ast.AsyncFor) -> str:
    return f"{ast.unparse(node.target)} in {ast.unparse(node.iter)}"


def _with_text(node: ast.With | ast.AsyncWith) -> str:
    items = []
    for item in node.items:
        text = ast.unparse(item.context_expr)
        if item.optional_vars is not None:
            text += f" as {ast.unparse(item.optional_vars)}"
        items.append(text)
    return ", ".join(items)


def _case_text(subject: ast.expr, case: ast.match_case) -> str:
    text = f"{ast.unparse(subject)} matches {ast.unparse(case.pattern)}"
    return text + (f" if {ast.unparse(case.guard)}" if case.guard is not None else "")


def _entry_conditions(
    entry: BlockEntry, elif_: bool
) -> list[tuple[ConditionKind, str, bool, int, list[ast.expr]]]:
    """(kind, expr, holds, line, expressions read) for entering one block."""
    node, branch = entry.node, entry.branch
    line = node.lineno
    if isinstance(node, ast.If):
        kind: ConditionKind = "elif" if elif_ else "if"
        return [(kind, ast.unparse(node.test), branch == "body", line, [node.test])]
    if isinstance(node, ast.While):
        return [("while", ast.unparse(node.test), branch == "body", line, [node.test])]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [("for", _loop_text(node), branch == "body", line, [node.iter])]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        exprs = [item.context_expr for item in node.items]
        return [("with", _with_text(node), True, line, exprs)]
    if isinstance(node, ast.Match):
        out: list[tuple[ConditionKind, str, bool, int, list[ast.expr]]] = []
        for case in node.cases:
            holds = case is entry.item
            reads = [node.subject] + ([case.guard] if case.guard is not None else [])
            out.append(("case", _case_text(node.subject, case), holds, case.pattern.lineno, reads))
            if holds:
                break
        return out
    # try / try*: which part of the statement the raise is in
    if branch == "handler" and isinstance(entry.item, ast.ExceptHandler):
        handler = entry.item
        caught = ast.unparse(handler.type) if handler.type is not None else "BaseException"
        return [("except", caught, True, handler.lineno, [])]
    if branch == "body" and isinstance(node, ast.Try | ast.TryStar):
        return [("try", try_marker(node), True, line, [])]
    marker = {"body": "try", "orelse": "no exception raised", "finalbody": "finally"}[branch]
    return [("try", marker, True, line, [])]


def _resolved(
    exprs: list[ast.expr],
    text: str,
    scope: Scope,
    pos: Position,
    attributes: Mapping[str, tuple[str, ...]],
    params: Passed,
) -> tuple[tuple[str, str], ...]:
    """Local names read by `exprs` (written `text`) mapped to the one assignment reaching `pos`;
    then the `self.name` attributes they read mapped to what the class assigns them, and the
    parameters to what the callers in the module pass."""
    found = _locals(exprs, text, scope, pos)
    if attributes and "self." in text:
        found += _attributes(exprs, attributes)
    blob = " ".join([text, *(value for _, value in found)])
    if params.names and any(name in blob for name in params.names):
        found += _parameters(exprs, found, scope, pos, params)
    return found


class Passed:
    """What the callers of a scope's function pass for its parameters (`ingest.extract.callers`),
    found only when a guard reads a parameter."""

    def __init__(self, names: frozenset[str], find: Callable[[], Mapping[str, str]]) -> None:
        self.names = names
        self._find = find
        self._values: Mapping[str, str] | None = None

    @property
    def values(self) -> Mapping[str, str]:
        """Parameter -> the source the calls pass for it."""
        if self._values is None:
            self._values = self._find()
        return self._values


NO_PARAMS = Passed(frozenset(), dict)


def _parameters(
    exprs: list[ast.expr],
    found: tuple[tuple[str, str], ...],
    scope: Scope,
    pos: Position,
    params: Passed,
) -> tuple[tuple[str, str], ...]:
    """Parameters read by `exprs` or by the locals they resolve to, still holding what the caller
    passed at `pos`, mapped to the callers' arguments."""
    trees = list(exprs)
    for _, value in found:
        try:
            trees.append(ast.parse(value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError):
            continue
    seen = dict(found)
    out: dict[str, str] = {}
    for tree in trees:
        for n in ast.walk(tree):
            if not isinstance(n, ast.Name) or n.id in seen or n.id in out:
                continue
            if n.id in params.names and scope.lookup(n.id, pos) is None:
                passed = params.values.get(n.id)
                if passed is not None:
                    out[n.id] = passed
    return tuple(out.items())


def _attributes(
    exprs: list[ast.expr], attributes: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, str], ...]:
    """`self.name` -> the value its class assigns (several values as one tuple's source)."""
    seen: dict[str, str] = {}
    for e in exprs:
        for n in ast.walk(e):
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
                and n.attr in attributes
            ):
                values = attributes[n.attr]
                key = f"self.{n.attr}"
                if key not in seen:
                    seen[key] = values[0] if len(values) == 1 else f"({', '.join(values)})"
    return tuple(seen.items())


def _locals(
    exprs: list[ast.expr], text: str, scope: Scope, pos: Position
) -> tuple[tuple[str, str], ...]:
    assigned = scope.assigned_names
    if not exprs or not any(name in text for name in assigned):  # cheap: no walk needed
        return ()
    seen: dict[str, str] = {}
    names = sorted(
        (n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for name in names:
        if name.id in seen or name.id not in assigned:
            continue
        definition = scope.lookup(name.id, pos)
        if isinstance(definition, Assigned):
            seen[name.id] = ast.unparse(definition.value)
    return tuple(seen.items())


def _is_early_exit(stmt: ast.stmt) -> bool:
    """`if cond: ... return|continue|break` with no else: code after it needs `not cond`."""
    return isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], _EXITS)


class GuardChains:
    """Guard chains of the raises in one scope; the raises of a scope share most of their guards,
    so each guard's condition (its unparsed text and resolved names) is built once."""

    def __init__(
        self,
        scope: Scope,
        attributes: Mapping[str, tuple[str, ...]],
        params: Passed = NO_PARAMS,
    ) -> None:
        """`attributes`: what the scope's class assigns to each `self.name` (see
        `ingest.extract.attributes`), empty outside a method; `params`: what the callers pass."""
        self.scope = scope
        self.attributes = attributes
        self.params = params
        self._entries: dict[tuple[int, str, int, bool], tuple[Condition, ...]] = {}
        self._exit_indices: dict[int, list[int]] = {}
        self._exits: dict[tuple[int, int], Condition] = {}

    def chain(self, frames: tuple[PathStep, ...]) -> tuple[tuple[Condition, ...], int | None]:
        """The conditions guarding the statement `frames` lead to, and the outermost guard line."""
        conditions: list[Condition] = []
        outermost: int | None = None
        for level, frame in enumerate(frames):
            entry = frame.entry
            if entry is not None:
                elif_ = level >= 1 and _is_elif(entry.node, frames[level - 1])
                found = self._entry(entry, elif_, frames[:level])
                conditions.extend(found)
                first = min(c.line for c in found)
                outermost = first if outermost is None else min(outermost, first)
            conditions.extend(self._early_exits(frame, frames[:level]))
        return tuple(conditions), outermost

    def _entry(
        self, entry: BlockEntry, elif_: bool, outer: tuple[PathStep, ...]
    ) -> tuple[Condition, ...]:
        key = (id(entry.node), entry.branch, id(entry.item), elif_)
        found = self._entries.get(key)
        if found is None:
            pos = position(outer)
            found = self._entries[key] = tuple(
                Condition(
                    kind,
                    expr,
                    holds,
                    line,
                    _resolved(reads, expr, self.scope, pos, self.attributes, self.params),
                )
                for kind, expr, holds, line, reads in _entry_conditions(entry, elif_)
            )
        return found

    def _early_exits(self, frame: PathStep, outer: tuple[PathStep, ...]) -> list[Condition]:
        block = frame.block
        indices = self._exit_indices.get(id(block))
        if indices is None:
            indices = self._exit_indices[id(block)] = [
                k for k, stmt in enumerate(block) if _is_early_exit(stmt)
            ]
        out = []
        for k in indices[: bisect_left(indices, frame.at)]:
            condition = self._exits.get((id(block), k))
            if condition is None:
                test: ast.expr = block[k].test  # type: ignore[attr-defined]
                text = ast.unparse(test)
                at = (*position(outer), (block, k))
                resolved = _resolved([test], text, self.scope, at, self.attributes, self.params)
                condition = Condition("if", text, False, block[k].lineno, resolved)
                self._exits[(id(block), k)] = condition
            out.append(condition)
        return out
