"""Fixes that change the input the value-origin index reached, and the way around internal checks.

The index (`Site.origin`) names the inputs a check's values come from ("--page-size", "request:
n", "env: SGLANG_X", "config.json: hidden_size"); when no more specific fix names one of them,
the entry still says which input to change and how. For an internal check it names the inputs
that choose the code path: changing one avoids the check until the bug is fixed.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from errkb.core.origin import Origin
from errkb.knowledge.facts import Fix, Provenance
from errkb.knowledge.origins.inputs import is_config_field

_PROV: tuple[Provenance, ...] = ("derived:conditions",)


def _input_fix(name: str, project: str, asked: str = "") -> Fix | None:
    """The fix of one input the index reached; `asked` is the message's first sentence, which
    says what the check wants of it better than "the check depends on its value"."""
    kind, _, value = name.partition(": ")
    wants = f": the check refuses the value it has; the message says: “{asked}”." if asked else ""
    if kind == "network":
        return Fix(
            "environment",
            "Check the network from this machine: reach the host it downloads from or connects "
            "to (a proxy with HTTPS_PROXY, a mirror such as HF_ENDPOINT), or fetch what it needs "
            "ahead of time (a model downloaded to a local folder, passed by its path), then start "
            "again.",
            _PROV,
        )
    if name.startswith("--"):
        return Fix(
            "flag",
            f"Change {name} (or leave it out) when you start {project}"
            + (wants or ": the failing check depends on its value."),
            _PROV,
            flag=name,
        )
    if kind == "request":
        return Fix(
            "request_field",
            f"Change `{value}` in the request (or leave it out)"
            + (wants or ": the failing check depends on its value."),
            _PROV,
            input=value,
        )
    if kind == "env":
        return Fix(
            "environment",
            f"Unset {value} (or give it another value) where {project} starts"
            + (wants or ": the failing check depends on it."),
            _PROV,
            command=f"unset {value}",
            input=value,
        )
    if kind in ("config.json", "file"):
        field = value
        return Fix(
            "model",
            f"Check the model's configuration ({field} in its config.json): this code does not "
            f"accept {'the values they have' if ' and ' in field else 'the value it has'}. Serve "
            "a model (or a revision of it) that this code supports.",
            _PROV,
        )
    return None


_MODEL = ("config.json: ", "file: ")


def input_fixes(origin: Origin | None, project: str, asked: str = "") -> list[Fix]:
    """One fix per input the index reached, in its order (`asked`: the message's first
    sentence, quoted as what the check wants)."""
    if origin is None:
        return []
    inputs = [n for n in origin.inputs if is_config_field(n) or not n.startswith("config.json")]
    fields = [n.split(": ", 1)[1] for n in inputs if n.startswith(_MODEL)]
    out: list[Fix] = []
    for name in inputs:
        if name.startswith(_MODEL):
            if len(fields) > 1 and out and out[-1].kind == "model":
                continue  # the model's fields in one fix, not one each
            name = f"config.json: {_and(fields)}" if len(fields) > 1 else name
        fix = _input_fix(name, project, asked)
        if fix is not None:
            out.append(fix)
    return out


def _and(names: list[str]) -> str:
    """ "a, b and c"."""
    names = list(dict.fromkeys(names))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def path_flag(path: str, path_flags: tuple[tuple[str, str], ...]) -> str | None:
    """The flag (or "env: NAME=value") that chooses the code in that file, from the pins."""
    return next((flag for glob, flag in path_flags if fnmatchcase(path, glob)), None)


def workaround_fixes(
    origin: Origin | None,
    project: str,
    path: str = "",
    path_flags: tuple[tuple[str, str], ...] = (),
) -> list[Fix]:
    """For an internal check: the inputs that choose its code path, as a way around it; else
    the flag the pins name for the file's code (a backend chosen by a flag)."""
    names = list(origin.path_inputs) if origin is not None else []
    chooser = path_flag(path, path_flags)
    if chooser and chooser.split("=")[0] not in {n.split("=")[0] for n in names}:
        names.append(chooser)
    out = []
    for name in names:
        kind, _, value = name.partition(": ")
        if name.startswith("--"):
            out.append(
                Fix(
                    "flag",
                    f"Until it is fixed, start {project} with another value of {name} (or "
                    "without it): it chooses the code that runs this check.",
                    _PROV,
                    flag=name,
                )
            )
        elif kind == "env" and "=" in value:  # a value the pins name that avoids the code
            var, _, fixed = value.partition("=")
            out.append(
                Fix(
                    "environment",
                    f"Until it is fixed, start {project} with {var}={fixed}: it runs another "
                    "implementation of this operation.",
                    _PROV,
                    command=f"export {var}={fixed}",
                    input=var,
                )
            )
        elif kind == "env":
            out.append(
                Fix(
                    "environment",
                    f"Until it is fixed, unset {value} (or give it another value): it chooses "
                    "the code that runs this check.",
                    _PROV,
                    command=f"unset {value}",
                    input=value,
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
