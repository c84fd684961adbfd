"""Where an expression is read (`Place`), and what a call passes for a parameter, read from the
call's source text."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from errkb.ingest.origins.exprs import parse_expr
from errkb.ingest.origins.module_facts import Func
from errkb.ingest.origins.unparsed import unparsed


@dataclass(frozen=True)
class Place:
    """Where an expression is read: its file and function."""

    path: str
    func: Func | None

    def __str__(self) -> str:
        where = self.func.qualname if self.func else "module level"
        return f"{where} ({self.path.rsplit('/', 2)[-2:][-1]})"


def argument(call: str, func: Func, name: str) -> str | None:
    """The source of what a call passes for a parameter, None when it cannot tell."""
    node = parse_expr(call)
    if not isinstance(node, ast.Call):
        return None
    for kw in node.keywords:
        if kw.arg == name:
            return unparsed(kw.value)
    params = list(func.params)
    if func.owner and params and params[0] in ("self", "cls"):
        params = params[1:]
    if name not in params:
        return None
    i = params.index(name)
    if any(isinstance(a, ast.Starred) for a in node.args[: i + 1]):
        return None
    if i < len(node.args):
        return unparsed(node.args[i])
    return None  # the default value: said by the signature, not the caller


def hands_on(call: str, caller: Func) -> bool:
    """True when a call passes on its caller's own `**kwargs`."""
    kwargs = caller.star[1]
    return bool(kwargs) and re.search(rf"\*\*{kwargs}\b", call) is not None


def leaves_default(call: str, func: Func, name: str) -> bool:
    """True when a call passes nothing for the parameter (no keyword, too few positions, no
    `*args` or `**kwargs` that might carry it)."""
    node = parse_expr(call)
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return False
    if any(isinstance(a, ast.Starred) for a in node.args):
        return False
    params = list(func.params)
    if func.owner and params and params[0] in ("self", "cls"):
        params = params[1:]
    return name in params and params.index(name) >= len(node.args)


def fits(call: str, func: Func) -> bool:
    """False when a call cannot be one of `func`: it passes more positions than the function
    takes, a keyword it does not take, or leaves out a parameter it needs. A method's name is
    matched with any receiver (`module.forward(...)` of a compiled kernel is not
    `GptOssModel.forward`); its signature tells them apart. True when the call cannot be read,
    or spreads `*args` or `**kwargs`, and for a signature built from fields (`start` 0)."""
    node = parse_expr(call)
    if func.start == 0 or not isinstance(node, ast.Call):
        return True
    params = list(func.params)
    if func.owner and params and params[0] in ("self", "cls"):
        params = params[1:]
    spread = any(isinstance(a, ast.Starred) for a in node.args)
    spread_kw = any(k.arg is None for k in node.keywords)
    args, kwargs = func.star
    if not args and not spread and len(node.args) > len(params):
        return False
    named = {k.arg for k in node.keywords if k.arg is not None}
    if not kwargs and named - set(params):
        return False
    if spread or spread_kw:
        return True
    given = set(params[: len(node.args)]) | named
    return all(p in given or func.default(p) is not None for p in params)
