"""A snapshot's exception hierarchy: which builtin class each raised class comes down from.

Extraction records every class statement with its bases (`records.ClassDef`), file by file.
Here they are put together for the whole snapshot, so that `class FooError(ValueError)` raised
anywhere is known as a ValueError too. A name defined more than once is resolved through the
first definition that leads to an exception class. A class the snapshot does not define and
Python does not build in (a dependency's, such as `HTTPException`) keeps a chain of itself
alone: its code is not read.
"""

from __future__ import annotations

from collections.abc import Iterable

from errkb.core.builtin_classes import builtin_chain
from errkb.core.records import ClassDef

TOP = "BaseException"


class Hierarchy:
    """The class chains of one snapshot's classes."""

    def __init__(self, classes: Iterable[ClassDef]) -> None:
        self._bases: dict[str, list[tuple[str, ...]]] = {}
        for c in classes:
            self._bases.setdefault(c.name, []).append(c.bases)
        self._chains: dict[str, tuple[str, ...]] = {}

    def chain(self, name: str) -> tuple[str, ...]:
        """`name` and its bases up to BaseException, or `(name,)` when they are unknown."""
        found = self._chains.get(name)
        if found is None:
            found = self._chains[name] = self._resolve(name, frozenset())
        return found

    def _resolve(self, name: str, seen: frozenset[str]) -> tuple[str, ...]:
        if name in self._chains:
            return self._chains[name]
        # A builtin name redefined by the project (`class TimeoutError(Exception)`) is the
        # project's: it is what `raise TimeoutError` there raises.
        for bases in self._bases.get(name, ()):
            for base in bases:
                if base in seen or base == name:
                    continue
                up = self._resolve(base, seen | {name})
                if up[-1] == TOP:
                    return (name, *up)
        return builtin_chain(name)
