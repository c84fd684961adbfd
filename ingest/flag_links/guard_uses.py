"""What a guard needs of the flags it reads: on / off, eq / ne / in / not_in a value, or other.

A guard condition is walked through its boolean structure (negations, `and` / `or`, one-operator
comparisons), tracking the truth value the raise needs, and local names are followed through the
expressions assigned to them (`pd_enabled` -> `get_disagg().disaggregation_mode != "null"`), as
are `self.` attributes through what their class assigns and parameters through what the callers
in the module pass (`self.tp_size` -> `server_args.tp_size`).
`required` says whether every way of reaching the raise needs the use (changing that flag alone
avoids the guard) or it is one alternative among several.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from errkb.core.negation import NEGATED_SYMBOLS, SYMBOLS
from errkb.core.records import Condition
from errkb.ingest.flag_links.reads import Reads, parse_expr

_BOOLEAN_KINDS = frozenset({"if", "elif", "else", "while", "assert"})
_MAX_DEPTH = 8  # local-name resolution chains; cycles and deep chains stop here
_MIRROR = {
    "==": "==",
    "!=": "!=",
    "<": ">",
    ">": "<",
    "<=": ">=",
    ">=": "<=",
    "is": "is",
    "is not": "is not",
}
_POLARITIES = {
    "==": "eq",
    "is": "eq",
    "!=": "ne",
    "is not": "ne",
    "in": "in",
    "not in": "not_in",
}


@dataclass(frozen=True)
class GuardUse:
    """One read of a flag inside a condition and what the condition needs of it."""

    dest: str
    polarity: str
    value: str | None
    required: bool
    via: str | None  # the local name it was reached through

    @property
    def strength(self) -> int:
        """How telling the use is: a required boolean/value use beats "other"."""
        return (2 if self.required else 0) + (1 if self.polarity != "other" else 0)


def condition_uses(cond: Condition, reads: Reads) -> list[GuardUse]:
    """Every flag read of one guard condition (its expression and resolved names)."""
    node = parse_expr(cond.expr)
    if node is None:
        return []
    analyzer = _Analyzer(reads, dict(cond.resolved))
    if cond.kind in _BOOLEAN_KINDS:
        return list(analyzer.uses(node, cond.holds, True, None))
    return list(analyzer.other(node, True, None, 0))


class _Analyzer:
    """Walks one condition's boolean structure, tracking the truth value the raise needs."""

    def __init__(self, reads: Reads, resolved: Mapping[str, str]) -> None:
        self.reads = reads
        self.resolved = resolved
        # Uses found through a resolved name, by (name, required, via, depth): a name read
        # several times, or reached along several resolution chains, is expanded only once.
        self._through: dict[tuple[str, bool, str | None, int, bool], list[GuardUse]] = {}

    def _deref(self, node: ast.expr) -> tuple[ast.expr, str | None]:
        """A local name (or `self.` attribute) resolved to a flag read stands for that read
        (`tp = args.tp_size`, `self.tp_size = server_args.tp_size`)."""
        key = _key(node, self.resolved)
        if key is not None:
            sub = parse_expr(self.resolved[key])
            if sub is not None and self.reads.dest(sub) is not None:
                return sub, key
        return node, None

    def uses(
        self, node: ast.AST, need: bool, required: bool, via: str | None, depth: int = 0
    ) -> Iterator[GuardUse]:
        if depth > _MAX_DEPTH:
            return
        if (dest := self.reads.dest(node)) is not None:
            yield GuardUse(dest, "on" if need else "off", None, required, via)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield from self.uses(node.operand, not need, required, via, depth)
        elif isinstance(node, ast.BoolOp):
            # `a and b` needed true (or `a or b` needed false) needs every operand; otherwise
            # each operand is only one way among several.
            every = isinstance(node.op, ast.And) == need
            for value in node.values:
                yield from self.uses(value, need, required and every, via, depth)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            yield from self._compare(node, need, required, via, depth)
        elif (key := _key(node, self.resolved)) is not None:
            sub = parse_expr(self.resolved[key])
            if sub is not None:
                yield from self.uses(sub, need, required, via or key, depth + 1)
        else:
            yield from self.other(node, required, via, depth)

    def _compare(
        self, node: ast.Compare, need: bool, required: bool, via: str | None, depth: int
    ) -> Iterator[GuardUse]:
        op = SYMBOLS.get(type(node.ops[0]))
        (left, via_left), (right, via_right) = map(self._deref, (node.left, node.comparators[0]))
        via = via or via_left or via_right
        dest = self.reads.dest(left)
        if dest is None and op in _MIRROR and self.reads.dest(right) is not None:
            left, right, op = right, left, _MIRROR[op]  # `"null" != args.mode`
            dest = self.reads.dest(left)
        if op is None or dest is None or self.reads.dest(right) is not None:
            yield from self.other(node, required, via, depth)
            return
        op = op if need else NEGATED_SYMBOLS[op]
        value = ast.unparse(right)
        polarity = _POLARITIES.get(op)
        if polarity is None:
            polarity, value = "other", f"{op} {value}"
        yield GuardUse(dest, polarity, value, required, via)
        yield from self.other(right, required, via, depth)

    def other(
        self, node: ast.AST, required: bool, via: str | None, depth: int
    ) -> Iterator[GuardUse]:
        """Any read of a flag in a non-boolean position: its use is `other`."""
        for child, built in _tested_parts(node):
            if (dest := self.reads.dest(child)) is not None:
                yield GuardUse(dest, "other", None, required, via)
            elif (name := _key(child, self.resolved)) is not None and depth < _MAX_DEPTH:
                key = (name, required, via or name, depth + 1, built)
                if (found := self._through.get(key)) is None:
                    sub = parse_expr(self.resolved[name])
                    if sub is not None and built:
                        sub = _built_object(sub)
                    found = [] if sub is None else list(self.other(sub, *key[1:4]))
                    self._through[key] = found
                yield from found


def _key(node: ast.AST, resolved: Mapping[str, str]) -> str | None:
    """The key `resolved` holds for a local name or a `self.` attribute (see
    `ingest.extract.conditions`), if any."""
    if isinstance(node, ast.Name):
        return node.id if node.id in resolved else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        key = f"{node.value.id}.{node.attr}"
        return key if key in resolved else None
    return None


def _built_object(node: ast.expr) -> ast.expr | None:
    """What of a local's value a guard reads when it reads a part of it (`cfg.num_layers`): a
    call's arguments only configure the object it builds (`AutoConfig.from_pretrained(path,
    trust_remote_code=args.trust_remote_code)`), so they are not tested; the function is."""
    return node.func if isinstance(node, ast.Call) else node


def _tested_parts(node: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node a condition tests, with whether the guard reads only a part of it.

    A flag passed to a call whose result the guard takes apart (`load(args.path).layers`,
    `make(args.x)[0]`) is an input of what was built, not something the guard tests: such
    arguments are skipped, which is what keeps a guard on a loaded config from linking to every
    flag the loader was given.
    """
    todo: list[tuple[ast.AST, bool]] = [(node, False)]
    while todo:
        child, built = todo.pop()
        yield child, built
        if isinstance(child, ast.Attribute | ast.Subscript):
            inner = child.value
            if isinstance(inner, ast.Call):
                todo.append((inner.func, False))
                if isinstance(child, ast.Subscript):
                    todo.append((child.slice, False))
                continue
            todo.append((inner, isinstance(inner, ast.Name)))
            if isinstance(child, ast.Subscript):
                todo.append((child.slice, False))
            continue
        todo.extend((c, False) for c in ast.iter_child_nodes(child))
