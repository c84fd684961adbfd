"""The guard of a raise as a short list of facts: simplified, then said in words.

Each `if`/`elif`/`while` condition on the way to the raise is split into its conjuncts (negated
ones pushed inward, `not (a or b)` -> `not a`, `not b`); a conjunct that another one implies is
dropped (an `elif` chain repeats the negation of every earlier branch: `not (a and b)` next to
`not a`). The conjuncts of one `elif` and the negated branches before it form one fact (the case
the chain picked), so a guard reads as the handful of facts a person would list.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from errkb.core.records import Condition, Site
from errkb.knowledge.words.phrases import Speaker, negate


@dataclass(frozen=True)
class Fact:
    """One fact of the guard: words for a person, the code it stands for, and what it reads."""

    text: str
    code: tuple[str, ...]  # the conjuncts, as they must hold
    worded: bool  # False when no words could be made and the code is quoted


def _split(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [c for v in node.values for c in _split(v)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.Or):
            return [c for v in inner.values for c in _split(negate(v))]
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return _split(inner.operand)
    return [node]


def _key(node: ast.expr) -> str:
    return ast.dump(node, annotate_fields=False)


def _implied(node: ast.expr, known: set[str]) -> bool:
    """True when facts already known make this conjunct true."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.BoolOp) and isinstance(inner.op, ast.And):
            # not (a and b): true as soon as one of them is known false
            return any(_key(negate(v)) in known for v in inner.values)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return any(_key(v) in known for v in node.values)
    return False


def _parsed(cond: Condition) -> ast.expr | None:
    try:
        node = ast.parse(cond.expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    return node if cond.holds else negate(node)


def groups(site: Site) -> list[list[ast.expr]]:
    """The guard's conjuncts, simplified and grouped: an `elif` with the branches it skipped."""
    out: list[list[ast.expr]] = []
    pending: list[ast.expr] = []  # negated earlier branches of an if/elif chain
    for cond in site.conditions:
        if cond.kind not in ("if", "elif", "while", "else", "match", "assert"):
            continue
        node = _parsed(cond)
        if node is None:
            continue
        # `assert False` (a raise written as an assert) tests nothing: no clause for it
        parts = [p for p in _split(node) if not isinstance(_unnegated(p), ast.Constant)]
        if cond.kind in ("if", "elif") and not cond.holds:
            pending += parts
            continue
        if cond.kind == "elif":
            out.append(parts + pending)  # the case the chain picked, then the ones it skipped
        else:
            out += [[p] for p in pending] + [[p] for p in parts]
        pending = []
    out += [[p] for p in pending]
    known = {_key(n) for g in out for n in g}
    simplified: list[list[ast.expr]] = []
    seen: set[str] = set()
    for g in out:
        kept = []
        for n in g:
            k = _key(n)
            if k in seen or _implied(n, known - {k}):
                continue
            seen.add(k)
            kept.append(n)
        if kept:
            simplified.append(kept)
    return simplified


def other_guards(site: Site) -> list[str]:
    """Loops, `with` blocks and handlers on the way to the raise, as short clauses."""
    out = []
    for cond in site.conditions:
        if cond.kind == "for" and cond.holds:
            continue
        if cond.kind == "for":
            out.append("a loop ended without finding what it looked for")
        elif cond.kind == "except":
            names = [n.strip() for n in cond.expr.strip("()").split(",") if n.strip()]
            caught = " or ".join(names) if names else "an exception"
            article = "an" if caught[:1].lower() in "aeiou" else "a"
            out.append(f"{article} {caught} was caught" if names else "an exception was caught")
    return out


def facts(site: Site, speaker: Speaker) -> list[Fact]:
    """The guard as facts in words, outermost first."""
    out = []
    for g in groups(site):
        text, worded = speaker.group(g)
        out.append(Fact(text, tuple(ast.unparse(n) for n in g), worded))
    out += [Fact(t, (), True) for t in other_guards(site)]
    return out


def _unnegated(node: ast.expr) -> ast.expr:
    """`not x` -> x; anything else as it is."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    return node
