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
    for cond in reversed(site.conditions):  # innermost `try` first
        if cond.kind != "try":
            continue
        for classes, action in _handlers(cond.expr):
            if names & set(classes) or _CATCH_ALL & set(classes):
                return None if action == "raises" else Caught(classes, action)
    return None


def swallowed_fix(site: Site) -> Fix | None:
    """What the user sees when the code around the raise catches it and goes on."""
    found = caught(site)
    if found is None:
        return None
    what = "logs it and goes on" if found.action == "logs" else "goes on without it"
    handler = f"`except {', '.join(found.classes)}`"
    seen = "a warning in the log" if found.action == "logs" else "nothing but the fallback"
    text = (
        f"This error does not stop the program: the code around the raise catches it "
        f"({handler}), {what}, so you see {seen} and the code takes its fallback. Nothing needs "
        "fixing unless that fallback is unwanted; then the conditions below say what leads here."
    )
    return Fix("condition", text, ("derived:conditions",))
