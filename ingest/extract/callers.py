"""What a function's callers in the same module pass for a parameter, so a guard on `tp` in
`def check(tp)` can be traced to `check(server_args.tp_size)` a few lines away.

Calls are found in the file's real text, not in the tree: the incremental extractor parses a
module with unchanged functions replaced by stand-ins, and must give the same records as a whole
parse (its unit context digest covers the same call texts, see `call_texts`). A call is found by
its callee (`name(`, `self.name(` / `cls.name(` for a method, `Owner(` for `__init__`), its
closing bracket by counting brackets outside string quotes, and it is parsed alone; a call that
does not parse, or passes `*args` before the parameter, says nothing.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator

MAX_CALL_CHARS = 2_000
MAX_CALLS = 20  # calls read per function: a helper called everywhere says little per call
MAX_VALUES = 3  # distinct values kept per parameter


def _callee(name: str, owner: str) -> re.Pattern[str]:
    """Where a call of function `name` (a method of `owner` when given) starts."""
    if owner and name == "__init__":
        return re.compile(rf"(?<![\w.]){re.escape(owner)}\(")
    if owner:
        return re.compile(rf"(?<![\w.])(?:self|cls)\.{re.escape(name)}\(")
    return re.compile(rf"(?<![\w.]){re.escape(name)}\(")


def call_texts(text: str, name: str, owner: str) -> list[str]:
    """The source of each call of the function in the module's text, in order."""
    if name not in text:
        return []
    out = []
    for m in _callee(name, owner).finditer(text):
        end = _closing(text, m.end() - 1)
        if end is not None:
            out.append(text[m.start() : end + 1])
            if len(out) >= MAX_CALLS:
                break
    return out


def _closing(text: str, start: int) -> int | None:
    """The offset of the bracket closing the one at `start`, skipping quoted strings."""
    depth, quote, i, stop = 0, "", start, min(len(text), start + MAX_CALL_CHARS)
    while i < stop:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#":
            newline = text.find("\n", i)
            i = stop if newline < 0 else newline
            continue
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _calls(texts: list[str]) -> Iterator[ast.Call]:
    for source in texts:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                node = ast.parse(source, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if isinstance(node, ast.Call):
            yield node


def passed(
    texts: list[str], function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool
) -> dict[str, str]:
    """Parameter -> what the calls pass for it (several values as one tuple's source)."""
    args = function.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if method and not _is_static(function):
        positional = positional[1:]  # self / cls is bound by the call
    names = set(positional) | {a.arg for a in args.kwonlyargs}
    values: dict[str, list[str]] = {}
    for call in _calls(texts):
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred) or i >= len(positional):
                break
            _add(values, positional[i], arg)
        for kw in call.keywords:
            if kw.arg in names:
                _add(values, kw.arg, kw.value)
    return {p: vs[0] if len(vs) == 1 else f"({', '.join(vs)})" for p, vs in values.items() if vs}


def _add(values: dict[str, list[str]], param: str, arg: ast.expr) -> None:
    shown = ast.unparse(arg)
    found = values.setdefault(param, [])
    if shown not in found and len(found) < MAX_VALUES and shown != param:
        found.append(shown)


def _is_static(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
