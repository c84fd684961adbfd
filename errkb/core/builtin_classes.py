"""Python's own exception classes and their bases: where every class chain ends.

Shared by the ingester (which resolves a snapshot's classes down to these) and the read side
(which shows the chain of a row stored before chains were, from its class name alone).
"""

from __future__ import annotations

import builtins


def _chains() -> dict[str, tuple[str, ...]]:
    out = {}
    for name, value in vars(builtins).items():
        if isinstance(value, type) and issubclass(value, BaseException):
            out[name] = tuple(c.__name__ for c in value.__mro__ if c is not object)
    return out


BUILTIN_CHAINS = _chains()


def builtin_chain(name: str) -> tuple[str, ...]:
    """A builtin class and its bases, nearest first (`KeyError` -> LookupError, Exception,
    BaseException); `(name,)` for any other class."""
    return BUILTIN_CHAINS.get(name, (name,))
