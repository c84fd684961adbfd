"""Fixes that change the input the value-origin index reached, and the way around internal checks.

The index (`Site.origin`) names the inputs a check's values come from ("--page-size", "request:
n", "env: SGLANG_X", "config.json: hidden_size"); when no more specific fix names one of them,
the entry still says which input to change and how. For an internal check it names the inputs
that choose the code path: changing one avoids the check until the bug is fixed.
"""

from __future__ import annotations

from errkb.core.origin import Origin
from errkb.knowledge.facts import Fix, Provenance

_PROV: tuple[Provenance, ...] = ("derived:conditions",)


def _input_fix(name: str, project: str) -> Fix | None:
    kind, _, value = name.partition(": ")
    if name.startswith("--"):
        return Fix(
            "flag",
            f"Start {project} without {name}, or with another value of it: the check reads it.",
            _PROV,
            flag=name,
        )
    if kind == "request":
        return Fix(
            "request_field",
            f"Send the request without `{value}`, or with another value of it: the check reads it.",
            _PROV,
            input=value,
        )
    if kind == "env":
        return Fix(
            "environment",
            f"Unset {value} where {project} starts, or give it another value: the check reads it.",
            _PROV,
            command=f"unset {value}",
            input=value,
        )
    if kind in ("config.json", "file"):
        field = value
        return Fix(
            "model",
            f"Check the model's configuration ({field} in its config.json): this code does not "
            "accept the value it has. Serve a model (or a revision of it) that this code supports.",
            _PROV,
        )
    return None


def input_fixes(origin: Origin | None, project: str) -> list[Fix]:
    """One fix per input the index reached, in its order."""
    if origin is None:
        return []
    return [f for name in origin.inputs if (f := _input_fix(name, project)) is not None]


def workaround_fixes(origin: Origin | None, project: str) -> list[Fix]:
    """For an internal check: the inputs that choose its code path, as a way around it."""
    if origin is None:
        return []
    out = []
    for name in origin.path_inputs:
        kind, _, value = name.partition(": ")
        if name.startswith("--"):
            out.append(
                Fix(
                    "flag",
                    f"Until it is fixed, avoid this code path: start {project} without {name}, "
                    "or with another value of it (it chooses the code that runs this check).",
                    _PROV,
                    flag=name,
                )
            )
        elif kind == "env":
            out.append(
                Fix(
                    "environment",
                    f"Until it is fixed, avoid this code path: unset {value}, or give it another "
                    "value (it chooses the code that runs this check).",
                    _PROV,
                    command=f"unset {value}",
                )
            )
    return out[:2]


def caught_fix(origin: Origin | None) -> Fix | None:
    """What the user sees when every caller found catches the error."""
    if origin is None or not origin.caught:
        return None
    logs = "logs it" in origin.caught
    return Fix(
        "condition",
        f"This error may not stop the program: its callers catch it ({origin.caught}). "
        + (
            "You see it in the log; only this request or transfer fails, and the server goes "
            "on. Nothing needs fixing unless that outcome is unwanted."
            if logs
            else "The code goes on without it. Nothing needs fixing unless that is unwanted."
        ),
        _PROV,
    )
