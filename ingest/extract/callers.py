"""What a function's callers in the same module pass for a parameter, so a guard on `tp` in
`def check(tp)` can be traced to `check(server_args.tp_size)` a few lines away.

Calls are found in the file's real text, not in the tree: the incremental extractor parses a
module with unchanged functions replaced by stand-ins, and must give the same records as a whole
parse (its unit context digest covers the same call texts, see `call_texts`). A call is found by
its callee (`name(`, `self.name(` / `cls.name(` for a method, `Owner(` for `__init__`), its
closing bracket by counting brackets outside string quotes, and it is parsed alone; a call that
does not parse, or passes `*args` before the parameter, says nothing, and one inside a string or
a comment (a docstring's usage example) is not a call. Finding the module's strings and comments
to tell is done only when a guard reads a parameter that has callers.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_right
from collections.abc import Iterator

MAX_CALL_CHARS = 2_000
# Text that is not code, in one left-to-right scan: a comment, or a string literal of any quoting
# (its prefix letters are added after). A quote inside a comment, or a hash inside a string, is
# consumed by the literal it sits in, as the tokenizer does.
_LITERALS = re.compile(
    r"""\#[^\r\n]*"""
    r"""|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\""""
    r"""|'''(?:[^'\\]|\\.|'(?!''))*'''"""
    r"""|"(?:[^"\\\r\n]|\\.)*\""""
    r"""|'(?:[^'\\\r\n]|\\.)*'""",
    re.DOTALL,
)
_PREFIX = frozenset("rRbBuUfF")
_WORD = re.compile(r"\w")
_CALLEE_BEFORE = re.compile(r"[\w.]")  # a character that makes `name(` part of a longer name
MAX_CALLS = 20  # calls read per function: a helper called everywhere says little per call
MAX_VALUES = 3  # distinct values kept per parameter


def _call_starts(text: str, name: str, owner: str) -> Iterator[int]:
    """Where each call of function `name` (a method of `owner` when given) starts: `name(` not
    preceded by a name character or a dot; `self.name(` / `cls.name(` for a method; `Owner(`
    for `__init__`. Found by plain substring search (a regex starting with a look-behind tried
    every offset of the module, a tenth of the ingest's time)."""
    leads: tuple[str, ...]
    if owner and name == "__init__":
        target, leads = owner, ("",)
    elif owner:
        target, leads = name, ("self.", "cls.")
    else:
        target, leads = name, ("",)
    needle = target + "("
    at = text.find(needle)
    while at >= 0:
        for lead in leads:
            start = at - len(lead)
            if start >= 0 and text.startswith(lead, start):
                if start == 0 or not _CALLEE_BEFORE.match(text, start - 1):
                    yield start
                break
        at = text.find(needle, at + 1)


def call_texts(text: str, name: str, owner: str) -> list[str]:
    """The source of each call of the function in the module's text, in order (docstrings and
    comments included: what the unit cache's context digest covers)."""
    return [source for _, source in _found(text, name, owner)]


def code_calls(text: str, name: str, owner: str, strings: list[tuple[int, int]]) -> list[str]:
    """The calls of `call_texts` that are code: not in a string or a comment (`strings`, from
    `string_spans`), as a docstring's usage example is."""
    out = []
    for start, source in _found(text, name, owner):
        k = bisect_right(strings, (start, len(text))) - 1
        if k < 0 or not strings[k][0] <= start < strings[k][1]:
            out.append(source)
    return out


def string_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the module's string literals (prefix included) and comments,
    sorted: the tokenizer's STRING and COMMENT tokens (the same spans on every file of four
    sglang releases), about 14 times faster than `tokenize`."""
    out = []
    for m in _LITERALS.finditer(text):
        start, end = m.span()
        if text[start] != "#":
            p = start
            while p > 0 and start - p < 2 and text[p - 1] in _PREFIX:
                p -= 1
            if p < start and not (p > 0 and _WORD.match(text, p - 1)):
                start = p  # r"...", b'...', f"...", rb"...": the prefix belongs to the literal
        out.append((start, end))
    return out


def _found(text: str, name: str, owner: str) -> list[tuple[int, str]]:
    if name not in text:
        return []
    out = []
    for start in _call_starts(text, name, owner):
        end = _closing(text, text.index("(", start))
        if end is not None:
            out.append((start, text[start : end + 1]))
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
