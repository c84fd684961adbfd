"""Environment variables an error depends on: named by its message or read by its guard.

Many errors are switched by an environment variable rather than a flag
(`SGLANG_DISAGG_STAGING_BUFFER`); naming it is a real lead for the reader. A message token counts
when it looks like a variable name (upper case, digits and underscores, at least two parts);
a guard read counts when it goes through `os.environ`, `os.getenv`, or an `env`/`envs` object.
"""

from __future__ import annotations

import ast
import re

from errkb.core.records import Condition, Template

_BRACED = re.compile(r"\{[^{}]*\}|<value of [^<>]*>")  # the code's names, not settings

_MIN_LEN = 6
_ENV_OBJECTS = ("env", "envs", "environ", "environment")


def _is_env_name(word: str) -> bool:
    parts = word.split("_")
    return (
        len(word) >= _MIN_LEN
        and len([p for p in parts if p]) >= 2
        and word[:1].isalpha()
        and word.upper() == word
        and all(c.isalnum() or c == "_" for c in word)
        and any(c.isalpha() for c in word)
    )


def named_in_message(template: Template) -> list[str]:
    """Variable-like names in the message's literal text, in order; a name in braces
    (`{_ROWS_PER_TG}`, a format field the code never filled) is the code's own name."""
    out: list[str] = []
    word: list[str] = []
    for ch in _BRACED.sub(" ", template.literal_text) + " ":
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            word.append(ch)
            continue
        token = "".join(word).strip("_")
        word = []
        if token and _is_env_name(token) and token not in out:
            out.append(token)
    return out


def _name_of(node: ast.AST) -> str | None:
    """The variable a node reads from the environment, if it does."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ"):
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = ast.unparse(node.func)
        if func.endswith(("getenv", "environ.get")) and isinstance(node.args[0].value, str):
            return node.args[0].value
    if isinstance(node, ast.Attribute) and _is_env_name(node.attr):
        base = node.value
        name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        return node.attr if name.lower() in _ENV_OBJECTS else None
    return None


def read_by_guard(conditions: tuple[Condition, ...]) -> list[str]:
    """Variables the guard conditions (or the locals they resolve to) read, in order."""
    out: list[str] = []
    for cond in conditions:
        for expr in (cond.expr, *(value for _, value in cond.resolved)):
            try:
                tree = ast.parse(expr, mode="eval")
            except (SyntaxError, ValueError, RecursionError):
                continue
            for node in ast.walk(tree):
                name = _name_of(node)
                if name and name not in out:
                    out.append(name)
    return out
