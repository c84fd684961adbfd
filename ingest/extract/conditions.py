"""The guard chain of a raise: the tests that must hold (or fail) for control to reach it.

The site walker records how each enclosing block was entered (`Entry`); from that path this module
derives one `Condition` per enclosing `if`/`elif`/`else`, loop, `try`/`except`, `with` and
`match`/`case`, outermost first, stopping at the enclosing function (a nested function's raise is
not guarded by its parent's `if`s at call time). An earlier `if cond: return|continue|break` in an
enclosing block is also a guard (`not cond` held); an earlier `if cond: raise ...` is not
included: in validation code that is a sibling check with its own entry, and listing every one
would bury the guards that matter.

Local names read by a condition are resolved to the single assignment that reaches the test, so
`if pd_enabled:` explains itself (`pd_enabled` -> `get_disagg().disaggregation_mode != 'null'`).
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from ingest.extract.scope import Assigned, Position, Scope
from ingest.records import Condition


class Entry(NamedTuple):
    """How a block was entered: the compound statement, which branch, and the handler or case."""

    node: ast.stmt
    branch: str  # body | orelse | handler | finalbody | case
    item: ast.AST | None = None


class Frame(NamedTuple):
    """One level of the path to a statement: the block, the index in it, and how it was entered."""

    block: list[ast.stmt]
    at: int
    entry: Entry | None


_EXITS = (ast.Return, ast.Continue, ast.Break)


def position(frames: tuple[Frame, ...] | list[Frame]) -> Position:
    """The lookup position of the statement the frames lead to."""
    return tuple((f.block, f.at) for f in frames)


def _is_elif(node: ast.stmt, outer: Frame) -> bool:
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
    entry: Entry, elif_: bool
) -> list[tuple[str, str, bool, int, list[ast.expr]]]:
    """(kind, expr, holds, line, expressions read) for entering one block."""
    node, branch = entry.node, entry.branch
    line = node.lineno
    if isinstance(node, ast.If):
        kind = "elif" if elif_ else "if"
        return [(kind, ast.unparse(node.test), branch == "body", line, [node.test])]
    if isinstance(node, ast.While):
        return [("while", ast.unparse(node.test), branch == "body", line, [node.test])]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [("for", _loop_text(node), branch == "body", line, [node.iter])]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        exprs = [item.context_expr for item in node.items]
        return [("with", _with_text(node), True, line, exprs)]
    if isinstance(node, ast.Match):
        out = []
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
    marker = {"body": "try", "orelse": "no exception raised", "finalbody": "finally"}[branch]
    return [("try", marker, True, line, [])]


def _resolved(exprs: list[ast.expr], scope: Scope, pos: Position) -> tuple[tuple[str, str], ...]:
    """Local names read by `exprs` mapped to the one assignment reaching `pos` (if simple)."""
    seen: dict[str, str] = {}
    names = sorted(
        (n for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    for name in names:
        if name.id in seen or name.id not in scope.local_names:
            continue
        definition = scope.lookup(name.id, pos)
        if isinstance(definition, Assigned):
            seen[name.id] = ast.unparse(definition.value)
    return tuple(seen.items())


def _early_exits(frame: Frame, outer: tuple[Frame, ...], scope: Scope) -> list[Condition]:
    out = []
    for k in range(frame.at):
        stmt = frame.block[k]
        if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], _EXITS):
            pos = (*position(outer), (frame.block, k))
            resolved = _resolved([stmt.test], scope, pos)
            out.append(Condition("if", ast.unparse(stmt.test), False, stmt.lineno, resolved))
    return out


def guard_chain(
    frames: tuple[Frame, ...], scope: Scope
) -> tuple[tuple[Condition, ...], int | None]:
    """The conditions guarding the statement `frames` lead to, and the outermost guard's line."""
    conditions: list[Condition] = []
    outermost: int | None = None
    for level, frame in enumerate(frames):
        entry = frame.entry
        if entry is not None:
            outer = frames[:level]
            elif_ = level >= 1 and _is_elif(entry.node, frames[level - 1])
            pos = position(outer)
            for kind, expr, holds, line, reads in _entry_conditions(entry, elif_):
                resolved = _resolved(reads, scope, pos) if reads else ()
                conditions.append(Condition(kind, expr, holds, line, resolved))
                outermost = line if outermost is None else min(outermost, line)
        conditions.extend(_early_exits(frame, frames[:level], scope))
    return tuple(conditions), outermost
