"""The match index as bytes and back, for the copy kept on disk (`index_file`).

A pickle, because reading one is what makes the kept index worth having: for one sglang release
it is about a million tuples and strings, which the C unpickler rebuilds in about 0.3 s, where
any format read in Python (JSON, msgpack) would have to build the same objects one by one again,
the very work the index's build does. A pickle can name any function to call, so this one is
read by an unpickler that builds only the matcher's own classes (dataclasses and named tuples
defined in `errkb.service.match.matcher`) and the two functions an index holds as its
`test_path`: a crafted file can at worst give a wrong index, never run code.

The matcher's frozen dataclasses are compiled by mypyc, whose default pickling sets each field
through the class's `__setattr__`, which a frozen dataclass refuses: they are written as their
class and field values, and rebuilt by `_restore`.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any

from errkb.knowledge.who.evidence import in_test_code
from errkb.service.match.matcher import MatchIndex

_PROTOCOL = 5
_MATCHER = "errkb.service.match.matcher."


def _default_test_path() -> Any:
    return next(f.default for f in fields(MatchIndex) if f.name == "test_path")


# The functions an index may hold (its `test_path`), by where pickle finds them.
_FUNCTIONS = {(f.__module__, f.__qualname__) for f in (in_test_code, _default_test_path())}


def index_bytes(index: MatchIndex) -> bytes:
    """The index as bytes that `index_from_bytes` reads back."""
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=_PROTOCOL).dump(index)
    return buffer.getvalue()


def index_from_bytes(data: bytes) -> MatchIndex:
    """The index `index_bytes` wrote; `pickle.UnpicklingError` (or another error of a damaged
    file) for anything else."""
    found = _Unpickler(io.BytesIO(data)).load()
    if not isinstance(found, MatchIndex):
        raise pickle.UnpicklingError("the file does not hold a match index")
    return found


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))  # init=False fields too (`probes`)


def _restore(cls: type, values: tuple[Any, ...]) -> Any:
    """An instance of a matcher dataclass with these field values, its `__init__` not run."""
    if not _ours(cls) or not is_dataclass(cls):
        raise pickle.UnpicklingError(f"{cls!r} is not a class of the match index")
    names = _field_names(cls)
    if not isinstance(values, tuple) or len(values) != len(names):
        raise pickle.UnpicklingError(f"wrong fields for {cls.__name__}")
    obj = cls.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


def _ours(found: object) -> bool:
    """True for a class defined in one of the matcher's modules."""
    return (
        isinstance(found, type)
        and found.__module__.startswith(_MATCHER)
        and (is_dataclass(found) or issubclass(found, tuple))
    )


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if is_dataclass(obj) and not isinstance(obj, type):
            cls = type(obj)
            return _restore, (cls, tuple(getattr(obj, n) for n in _field_names(cls)))
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (__name__, "_restore") or (module, name) in _FUNCTIONS:
            return super().find_class(module, name)
        if module.startswith(_MATCHER) and name.isidentifier():
            found = super().find_class(module, name)
            if _ours(found) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a match index")
