"""Errors the code around them catches: the user sees a warning or a fallback, not a crash.

The guard chain marks a raise in a `try` body with that `try`'s handlers and what each does
(`ingest.extract.handlers`: `try: except A, B -> logs; except C -> raises`). When the innermost
handler that catches the error logs it or carries on, the entry says what the user sees, and that
nothing needs fixing unless the fallback is unwanted.
"""

from __future__ import annotations

from dataclasses import dataclass

from errkb.core.records import Site
from errkb.knowledge.facts import Fix

_MARK = "try: "
_CATCH_ALL = frozenset({"Exception", "BaseException"})


@dataclass(frozen=True)
class Caught:
    """The handler that catches the error: its classes and what it does (logs or continues)."""

    classes: tuple[str, ...]
    action: str
    looped: bool = False  # the `try` is inside a loop: the code goes on with its next pass


def _handlers(expr: str) -> list[tuple[tuple[str, ...], str]]:
    if not expr.startswith(_MARK):
        return []
    out = []
    for part in expr[len(_MARK) :].split("; "):
        head, _, action = part.partition(" -> ")
        classes = tuple(c.strip() for c in head.removeprefix("except ").split(","))
        out.append((classes, action))
    return out


def caught(site: Site) -> Caught | None:
    """The handler around the raise that catches it and does not raise again, if any."""
    names = {site.exception, site.exception.rsplit(".", 1)[-1]}
    for k in range(len(site.conditions) - 1, -1, -1):  # innermost `try` first
        cond = site.conditions[k]
        if cond.kind != "try":
            continue
        for classes, action in _handlers(cond.expr):
            if names & set(classes) or _CATCH_ALL & set(classes):
                if action == "raises":
                    return None
                looped = any(c.kind in ("for", "while") for c in site.conditions[:k])
                return Caught(classes, action, looped)
    return None


def swallowed_fix(site: Site) -> Fix | None:
    """What the user sees when the code around the raise catches it and goes on."""
    found = caught(site)
    if found is None:
        return None
    handler = f"`except {', '.join(found.classes)}`"
    then = (
        ", then goes on with the loop's next pass (a retry, or the next item)"
        if found.looped
        else ""
    )
    if found.action == "logs":
        text = (
            f"This error may not stop the program: the code around the raise catches it "
            f"({handler}) and logs it instead of letting it propagate{then}. You see it in the "
            "log; what follows is the handler's fallback, a retry, or only this request or "
            "transfer failing. If the program works on, nothing needs fixing unless that outcome "
            "is unwanted; otherwise the conditions below say what leads here."
        )
    else:
        text = (
            f"This error does not stop the program: the code around the raise catches it "
            f"({handler}) and goes on without it{then}, so nothing is shown and the code takes "
            "its fallback. Nothing needs fixing unless that fallback is unwanted; then the "
            "conditions below say what leads here."
        )
    return Fix("condition", text, ("derived:conditions",))
