"""Independent checks of derived knowledge, shared by the knowledge tests."""

from __future__ import annotations

import ast
import re
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


# -- defect patterns of entry prose ----------------------------------------------------------
# One place for the patterns that the sample test asserts on 30 entries and bench/knowledge.py
# counts over every entry, so both measure the same thing.

# A placeholder naming a module constant (`{SUPPORTED_MODES}`, `{FLAG}`): the reader sees a name
# where the message prints a value. Short upper-case names (`{HV}`, `{BK}`) are kernel locals.
PLACEHOLDER = re.compile(r"\{_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\}|\{_?[A-Z]{4,}\}")
# Phrases made by pasting names into templates: "the get platform", "a new the object",
# "indices and indices differ in length", "is not is".
BROKEN = (
    re.compile(r"\bthe (?:get|set|is|has) [a-z]"),
    re.compile(r"\b(?:a|an|the) (?:new )?(?:a|an|the)\b"),
    re.compile(r"\b((?:the )?[a-z][a-z ]{0,40}?) and \1 (?:differ|have)\b"),
    re.compile(r"\b(?:is not|is) is\b|\bthe the\b|\bof of\b"),
    re.compile(r"\b(?:the|of) self\b(?! attention)"),  # "self attention" is a word
)
# A generic sentence standing in for the list the code states.
GENERIC = re.compile(
    r"\ban? (?:platform|model|value|architecture|dtype|data type|mode|backend|device)s? "
    r"(?:that )?this code (?:supports|accepts)\b"
)
_QUOTES = re.compile(r"“[^”]*”")  # the source's or the message's own words, quoted as written
DEFECTS = ("placeholder", "broken phrase", "backticks in what it means", "generic supports")


def prose(ex: Any) -> list[str]:
    """Every sentence of an explanation a person reads (what it means, when, solutions)."""
    texts = [ex.what_it_means.text, ex.trigger.text, *ex.common_situations.items]
    texts += [s.text for s in ex.solutions]
    if ex.example_fix is not None and ex.example_fix.note:
        texts.append(ex.example_fix.note)
    return texts


def defects(ex: Any) -> dict[str, list[str]]:
    """The defect patterns found in one explanation, each with the offending phrases."""
    texts = prose(ex)
    found: dict[str, list[str]] = {
        "placeholder": [m.group() for t in texts for m in PLACEHOLDER.finditer(t)],
        "broken phrase": [
            m.group() for t in texts for p in BROKEN for m in p.finditer(_QUOTES.sub("“”", t))
        ],
        "backticks in what it means": re.findall(r"`[^`]*`", ex.what_it_means.text),
        "generic supports": [m.group() for t in texts for m in GENERIC.finditer(t)],
    }
    return {k: v for k, v in found.items() if v}
