"""The expressions a trace reads: parsed once by text, cut into the name chains, calls and
literals they read (`leaves`), and the length marks of a value read only for its size.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from functools import lru_cache

from errkb.ingest.origins.reads import Rules, chain_of, read_of
from errkb.ingest.origins.unparsed import unparsed

LEN = "\x01"  # ends a `rest` whose value is read for its length only
_WRAPPERS = frozenset(
    "len isinstance any all int float str bool tuple list set sorted max min abs getattr hasattr "
    "type callable math.prod sum const_expr cutlass.const_expr".split()
)


@lru_cache(maxsize=50_000)
def parse_expr(text: str) -> ast.expr | None:
    """An expression's syntax tree (None when it does not parse); kept by text, as the same
    calls and expressions are read again from many sites. The trees are only read, never
    changed."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(f"({text.strip()})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def leaves(node: ast.AST) -> Iterator[ast.expr]:
    """The outermost name chains, calls and literals an expression reads; the arguments of
    `len`, `isinstance` and such are read in their place."""
    func = unparsed(node.func) if isinstance(node, ast.Call) else ""
    if isinstance(node, ast.Call) and func == "getattr" and literal_name(node):
        # `getattr(x, "name", default)` reads `x.name`
        yield ast.Attribute(node.args[0], literal_name(node), ast.Load())
        return
    if isinstance(node, ast.Call) and sized(node):
        yield node  # a length: read by `Walk._length`, not as the values it holds
        return
    if isinstance(node, ast.Call) and func in _WRAPPERS:
        args = node.args[:1] if func in ("isinstance", "hasattr", "getattr") else node.args
        for a in args:
            yield from leaves(a)
        return
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call | ast.Constant):
        yield node  # type: ignore[misc]
        return
    if isinstance(node, ast.Lambda | ast.comprehension):
        return
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        # `(f(t) for t in ts)`: what it loops over, and what the body reads beside its names
        bound = {
            n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
        }
        for g in node.generators:
            yield from leaves(g.iter)
        body = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in body:
            yield from (x for x in leaves(part) if not reads_only(x, bound))
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        shown = [s for s in (node.left, node.right) if isinstance(s, ast.List | ast.Tuple)]
        if shown:  # `[a] * n` holds `a`s; how many says nothing of what they are
            yield from leaves(shown[0])
            return
    if isinstance(node, ast.IfExp):  # the value is one branch; the test's literals only choose
        if _fixed(node.body) and _fixed(node.orelse):  # `torch.bf16 if envs.X else torch.f32`
            yield from (x for x in leaves(node.test) if not isinstance(x, ast.Constant))
        yield from leaves(node.body)
        yield from leaves(node.orelse)
        return
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.expr):
            yield from leaves(child)


def _fixed(node: ast.expr) -> bool:
    """A branch the code writes out (a literal, a constant's name, `torch.float32`): the test
    that picks it is what the value depends on. A branch that is itself computed carries its
    own origin, and the test only chooses which."""
    if isinstance(node, ast.Constant):
        return True
    chain = node
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    if not isinstance(chain, ast.Name) or chain.id in ("self", "cls"):
        return False
    return isinstance(node, ast.Attribute) or chain.id.isupper()


def root(node: ast.expr) -> str:
    """The name a chain starts from (`t` of `t.x[0]`), "" when it starts elsewhere."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def reads_only(node: ast.expr, names: set[str]) -> bool:
    """True for a chain from one of `names`, or a call given only such chains (`f(t)`)."""
    if root(node) in names and not isinstance(node, ast.Call):
        return True
    args = [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else []
    return bool(args) and all(root(a) in names for a in args)


def sized(node: ast.Call) -> bool:
    """True for `len(x)` of a name chain, a list written out, a comprehension or `[a] * n`."""
    if not isinstance(node.func, ast.Name) or node.func.id != "len":
        return False
    if len(node.args) != 1 or node.keywords:
        return False
    arg = node.args[0]
    if isinstance(arg, ast.List | ast.Tuple | ast.Set):
        return not any(isinstance(e, ast.Starred) for e in arg.elts)
    if isinstance(arg, ast.BinOp):
        shown = ast.List | ast.Tuple
        return isinstance(arg.op, ast.Mult) and (
            isinstance(arg.left, shown) or isinstance(arg.right, shown)
        )
    if isinstance(arg, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
        return True
    chain = chain_of(arg)
    if not chain:
        return False
    return not any(p.endswith("()") for p in chain)


def joined(parts: list[str]) -> str:
    """The rest of a chain whose value is read for its length."""
    return ".".join(parts) + LEN


def split_rest(rest: str) -> tuple[str, str]:
    """The first attribute of a rest, and what follows it (the length mark kept on it)."""
    mark = LEN if rest.endswith(LEN) else ""
    attr, _, more = rest.removesuffix(LEN).partition(".")
    return attr, more + mark


def applied(expr: str, rest: str) -> str:
    """`expr` read further by `rest`: `(e).a.b`, or `len((e).a)` for a length."""
    core = rest.removesuffix(LEN)
    text = f"({expr}).{core}" if core else expr
    return f"len({text})" if rest.endswith(LEN) else text


def merged(expr: str, rest: str) -> list[str]:
    """`expr` read by `rest`; a dict written out (`{**a, **b, "k": v}`) read by a key is what
    each merged dict holds under it, or the value written for it."""
    if not rest or not expr.lstrip().startswith("{"):
        return [applied(expr, rest)]
    node = parse_expr(expr)
    if not isinstance(node, ast.Dict):
        return [applied(expr, rest)]
    key, more = split_rest(rest)
    out = []
    for k, v in zip(node.keys, node.values, strict=True):
        if k is None:
            out.append(applied(unparsed(v), rest))
        elif isinstance(k, ast.Constant) and k.value == key:
            out.append(applied(unparsed(v), more))
    return out[::-1]  # the last written wins


def call_base(node: ast.expr) -> ast.Call | None:
    """The call a chain is read from (`f(x)` of `f(x).y[0]`), None when it does not start with
    one or is itself the call."""
    base = node
    while isinstance(base, ast.Attribute | ast.Subscript):
        base = base.value
    return base if isinstance(base, ast.Call) and base is not node else None


def literal_name(node: ast.Call) -> str:
    """The attribute name of `getattr(x, "name", ...)`, "" when it is not a literal."""
    if len(node.args) >= 2 and isinstance(a := node.args[1], ast.Constant):
        return a.value if isinstance(a.value, str) and a.value.isidentifier() else ""
    return ""


def reads_name(expr: str, name: str) -> bool:
    """True when an expression reads the name `name` (a word inside a string is not a read)."""
    if name not in expr:
        return False
    node = parse_expr(expr)
    if node is None:
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def constant(expr: str, path: str, rules: Rules) -> bool:
    """True for a returned expression made of literals and constants only."""
    node = parse_expr(expr)
    if node is None:
        return False
    return all(read_of(leaf, path, rules).kind == "internal" for leaf in leaves(node))


def handed(via: str) -> bool:
    """True when the trace went through a caller, a class's assignment or a default."""
    return " passed by " in via or " set in " in via or " left at its default" in via


def short(text: str) -> str:
    """A long expression cut to 70 characters, for a step's line."""
    return text if len(text) <= 70 else text[:67] + "..."
