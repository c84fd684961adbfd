"""What a `raise` or `assert` statement raises, as far as the code tells without running it.

`raise X(...)`, `raise X` and `raise mod.X(...)` name their class: by convention a class name
starts with a capital letter. Anything else (`raise self._error(...)`, `raise exc_cls(msg)`,
`raise err` for an error built earlier) is an indirect site: the class is only known at run
time, so the site is kept with its message and the callee's source as its class. Re-raising
the exception an `except ... as e` caught (`raise e`) raises nothing new, like a bare `raise`.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from errkb.core.records import SiteKind


class Raised(NamedTuple):
    """The class a site raises (as written, or the callee's source for an indirect one)."""

    kind: SiteKind
    name: str


def raised_name(exc: ast.expr | None) -> str | None:
    """The class name a `raise` statement names: `X`, `X(...)`, `mod.X(...)` -> "X"."""
    target = exc.func if isinstance(exc, ast.Call) else exc
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def is_class_name(name: str) -> bool:
    """True for a name written as a class is (`ValueError`, `_Fallback`), by convention."""
    return name.lstrip("_")[:1].isupper()


def raised(exc: ast.expr, caught: frozenset[str]) -> Raised | None:
    """What `raise exc` raises; None for a re-raise of a caught exception (`caught` names)."""
    name = raised_name(exc)
    if name is not None and is_class_name(name):
        return Raised("raise", name)
    if isinstance(exc, ast.Name) and exc.id in caught:
        return None
    target = exc.func if isinstance(exc, ast.Call) else exc
    return Raised("indirect", ast.unparse(target)[:200])
