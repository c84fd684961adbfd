"""Independent checks of derived knowledge, shared by the knowledge tests."""

from __future__ import annotations

import ast
import shlex
from collections.abc import Sequence
from typing import Any


def flag_values(command: str) -> dict[str, object]:
    """`--flag value` pairs of a command line; a flag without a value is True."""
    args = shlex.split(command)
    values: dict[str, object] = {}
    for i, a in enumerate(args):
        if a.startswith("--"):
            nxt = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("--") else None
            values[a] = True if nxt is None else nxt
    return values


def guard_holds(command: str, flags: Sequence[Any]) -> bool:
    """Do the command's flag values satisfy every required flag test of the guard?

    `flags` are involvements (records or JSON-like objects) with flag, polarity, value,
    required and a definition/default; defaults apply to flags the command leaves out.
    """
    values = flag_values(command)
    for f in flags:
        polarity = getattr(f, "polarity", None)
        if polarity is None or not getattr(f, "required", True):
            continue
        default_src = f.definition.default if hasattr(f, "definition") else f.default
        default = ast.literal_eval(default_src) if default_src else None
        v = values.get(f.flag, default)
        if polarity == "other":
            if not f.value:
                continue
            op, num = f.value.split(" ")
            ok = {
                ">": float(str(v)) > float(num),
                ">=": float(str(v)) >= float(num),
                "<": float(str(v)) < float(num),
                "<=": float(str(v)) <= float(num),
            }[op]
        else:
            want = ast.literal_eval(f.value) if f.value else None
            ok = {
                "on": bool(v),
                "off": not v,
                "eq": v == want,
                "ne": v != want,
                "in": v in (want or ()),
                "not_in": v not in (want or ()),
            }[polarity]
        if not ok:
            return False
    return True
