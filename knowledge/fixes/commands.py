"""Command-line arguments that make a guard's flag test hold, or fail.

For each involved flag and what the guard needs of it (its polarity and value), `trigger_args`
gives arguments under which the test holds and `escape` the change under which it no longer
does, using only the flag's type, default and choices. When no value can be derived, they say
so (None) instead of guessing.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from errkb.knowledge.facts import Involvement
from errkb.knowledge.words.wording import cli_value, default_words, literal_values

ANY_VALUE = "<value>"
_NUMERIC = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
_FALSY = {None, "", "0", "False", "''", "0.0"}


@dataclass(frozen=True)
class Escape:
    """A change that falsifies the flag's test: `args` replace the flag's arguments."""

    args: tuple[str, ...]
    text: str
    command: str | None  # the fragment to show ("--x null"); None when it is a removal


def is_bool(inv: Involvement) -> bool:
    """True for boolean switches (`store_true` or a `bool` field)."""
    d = inv.definition
    return d is not None and (d.type or "").removeprefix("Optional[").startswith("bool")


def _default(inv: Involvement) -> str | None:
    d = inv.definition
    return cli_value(d.default) if d is not None and d.default is not None else None


def known_choices(inv: Involvement) -> list[str]:
    """The flag's choices as values (none when they are given as an expression)."""
    d = inv.definition
    if d is None or not d.choices:
        return []
    # Choices given as an expression (`LOAD_FORMAT_CHOICES`) are not values.
    return [
        c
        for c in d.choices
        if c.replace("-", "").replace("_", "").replace(".", "").isalnum() and not c.isupper()
    ]


def _other_than(inv: Involvement, excluded: list[str], prefer_default: bool) -> str | None:
    default = _default(inv)
    candidates = [c for c in known_choices(inv) if c not in excluded]
    if prefer_default and default is not None and default not in excluded:
        return default
    non_default = [c for c in candidates if c != default]
    pool = non_default or candidates
    return pool[0] if pool else None


def _numeric(inv: Involvement) -> tuple[str, float] | None:
    """`("<=", 1.0)` from an `other` use whose value is a numeric comparison like `<= 1`."""
    if inv.polarity != "other" or not inv.value:
        return None
    op, _, num = inv.value.partition(" ")
    try:
        return (op, float(num)) if op in _NUMERIC else None
    except ValueError:
        return None


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def trigger_args(inv: Involvement) -> tuple[str, ...] | None:
    """Arguments under which the flag's test holds; () when the default already does."""
    flag, pol, default = inv.flag, inv.polarity, _default(inv)
    if not inv.cli:
        return None
    if pol == "on":
        if is_bool(inv):
            return (flag,)
        return (flag, _other_than(inv, [default or ""], False) or ANY_VALUE)
    if pol == "off":
        return () if default in _FALSY or (is_bool(inv) and default == "False") else None
    if pol == "eq":
        value = cli_value(inv.value)
        if inv.value == "None":
            return () if default is None else None
        if value == "True" and is_bool(inv):
            return (flag,)
        return None if value is None else (() if value == default else (flag, value))
    if pol == "ne":
        value = cli_value(inv.value)
        # `x is not None`: any value given, but not the choice spelled "none" (the off one)
        avoid = [value or "", "None"] + (["none"] if inv.value == "None" else [])
        alt = _other_than(inv, avoid, False)
        return (flag, alt or ANY_VALUE)
    if pol == "in":
        values = literal_values(inv.value) or []
        return (flag, values[0]) if values else None
    if pol == "not_in":
        alt = _other_than(inv, literal_values(inv.value) or [], False)
        return (flag, alt or ANY_VALUE)
    if (num := _numeric(inv)) is not None:
        op, n = num
        pick = {">": n + 1, ">=": n, "<": n - 1, "<=": n}[op]
        return (flag, _number(pick))
    return None


def escape(inv: Involvement) -> Escape | None:
    """The change that makes the flag's test fail, or None when none can be derived."""
    flag, pol, default = inv.flag, inv.polarity, _default(inv)
    dflt = default_words(inv)
    dflt = f" ({dflt})" if dflt else ""
    if not inv.cli:
        return None
    if pol == "on":
        if is_bool(inv) or default in _FALSY:
            return Escape((), f"Remove {flag} from the command line{dflt}", None)
        return None
    if pol == "off":
        if is_bool(inv):
            return Escape((flag,), f"Pass {flag}{dflt}", flag)
        return Escape((flag, ANY_VALUE), f"Set {flag} to a non-empty value{dflt}", None)
    if pol in ("eq", "in"):
        excluded = [cli_value(inv.value) or ""] if pol == "eq" else literal_values(inv.value) or []
        if pol == "eq" and inv.value == "True" and is_bool(inv):
            return Escape((), f"Remove {flag} from the command line{dflt}", None)
        alt = _other_than(inv, excluded, True)
        if alt is None:
            shown = ", ".join(excluded) or inv.value
            return Escape(
                (flag, ANY_VALUE), f"Set {flag} to a value other than {shown}{dflt}", None
            )
        return Escape((flag, alt), f"Run with {flag} {alt}{dflt}", f"{flag} {alt}")
    if pol == "ne":
        if inv.value == "None":
            return Escape((), f"Leave {flag} unset{dflt}", None)
        value = cli_value(inv.value)
        if value is None:
            return None
        if is_bool(inv) and value == "False":
            return Escape((), f"Remove {flag} from the command line{dflt}", None)
        return Escape((flag, value), f"Run with {flag} {value}{dflt}", f"{flag} {value}")
    if pol == "not_in":
        values = literal_values(inv.value) or []
        if not values:
            return None
        return Escape(
            (flag, values[0]),
            f"Run with {flag} set to one of {', '.join(values)}{dflt}",
            f"{flag} {values[0]}",
        )
    if (num := _numeric(inv)) is not None:
        op, n = num
        fails = {">": n, ">=": n - 1, "<": n, "<=": n + 1}[op]
        if default is not None:
            try:
                if not _NUMERIC[op](float(default), n):
                    fails = float(default)
            except ValueError:
                pass
        value = _number(fails)
        return Escape(
            (flag, value),
            f"Run with {flag} {value}{dflt}; the error needs {flag} {op} {_number(n)}",
            f"{flag} {value}",
        )
    return None
