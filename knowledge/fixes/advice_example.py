"""An example fix taken from the message's own advice, when that advice names a flag.

"Use --speculative-eagle-topk 1." or "Drop --enable-unified-memory or run without PD." says what
to change in the code authors' own words. With the flag's definition (a switch or not, the values
it takes) that becomes a before/after command line. Only a flag the project defines is used, and
only a value the advice spells out that the flag accepts (one of its choices, a number for a
numeric flag): "reduce --x" or "set --x to at least N" give no example, since no exact value
would be honest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errkb.core.records import Template
from errkb.knowledge.facts import ExampleFix, Involvement
from errkb.knowledge.fixes.commands import ANY_VALUE, is_bool, known_choices, trigger_args
from errkb.knowledge.words import message

_FLAG = r"(--[a-z0-9][a-z0-9-]*)"
_VALUE = r"(?:(?:\s*=\s*|\s+(?:to\s+)?)([^\s,;()]+))?"
_ADD = re.compile(
    r"\b(?:use|set|pass|add|specify|provide|try|(?:en|dis)able (?:it|this) with)\s+"
    r"(?:the\s+)?(?:flag\s+|option\s+)?" + _FLAG + _VALUE,
    re.I,
)
_RUN_WITH = re.compile(
    r"\b(?:re-?run|run|running|launch|start|restart|relaunch|retry|serve)\b[^.;]*?\bwith\s+"
    + _FLAG
    + _VALUE,
    re.I,
)
_DROP = re.compile(
    r"\b(?:drop|dropping|remove|removing|omit|unset|disable|instead of|"
    r"do not (?:use|pass|set)|don't (?:use|pass|set)|without)\s+"
    r"(?:the\s+)?(?:flag\s+|option\s+)?" + _FLAG + r"(?:[ =]([^\s,;()]+))?",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|never|n't)\s+(?:\w+\s+){0,2}$", re.I)
_TRUE, _FALSE = frozenset({"true", "1", "on", "yes"}), frozenset({"false", "0", "off", "no"})
_NOT_VALUES = frozenset(
    "a an the at to be one any some value values it this that for of and or with as in on "
    "instead during when while if unless until before after since then so but because by from "
    "into onto also only too here there first explicitly accordingly together server startup "
    "flag option argument".split()
)


@dataclass(frozen=True)
class Advised:
    """One change the advice asks for: set `flag` (to `value`, None for a switch), or drop it."""

    flag: Involvement
    value: str | None
    drop: bool
    sentence: str


def _find(flags: list[Involvement], name: str) -> Involvement | None:
    for f in flags:
        names = (f.flag, *(f.definition.flags if f.definition else ()))
        if name in names and f.cli:
            return f
    return None


def _accepted(f: Involvement, raw: str | None) -> tuple[bool, str | None] | None:
    """(it is set, the value to type) for the advised value, or None when the flag does not
    take it (a word of the sentence, a value outside its choices)."""
    value = raw.strip("'\"`.:!?") if raw else None
    if is_bool(f):
        if value is None or value.lower() in _TRUE:
            return True, None
        return (False, None) if value.lower() in _FALSE else (True, None)
    if value is None or value.lower() in _NOT_VALUES or "{" in value or not value:
        return None
    choices = known_choices(f)
    if choices and value not in choices:
        return None
    d = f.definition
    kind = (d.type or "").removeprefix("Optional[") if d is not None else ""
    if kind.startswith(("int", "float")):
        try:
            float(value)
        except ValueError:
            return None
    return True, value


def advised(template: Template, flags: list[Involvement]) -> Advised | None:
    """The first flag change the message's advice spells out exactly."""
    for sentence in message.advice(template):
        sentence = sentence.replace("`", "")  # "Please use `--attention-backend flashinfer`."
        found: list[tuple[int, re.Match[str], bool]] = []
        for pattern, drop in ((_DROP, True), (_ADD, False), (_RUN_WITH, False)):
            found += [(m.start(), m, drop) for m in pattern.finditer(sentence)]
        for start, m, drop in sorted(found, key=lambda t: t[0]):
            f = _find(flags, m.group(1))
            if f is None:
                continue
            negated = bool(_NEGATION.search(sentence[:start]))
            if drop or negated:
                value = m.group(2) if drop and m.group(2) and not is_bool(f) else None
                ok = _accepted(f, value) if value else None
                return Advised(f, ok[1] if ok else None, True, sentence)
            ok = _accepted(f, m.group(2))
            if ok is not None:
                return Advised(f, ok[1], not ok[0], sentence)
    return None


def advice_example(
    template: Template, flags: list[Involvement], launch_command: str | None
) -> ExampleFix | None:
    """The command line before and after the change the message advises."""
    change = advised(template, flags)
    if change is None:
        return None
    f = change.flag
    args: dict[str, tuple[str, ...]] = {}
    for g in flags:  # the flags the guard needs, so the before line reaches the raise
        if g.in_condition and g.required and g.cli and (trig := trigger_args(g)) is not None:
            args[g.dest] = trig
    before, after = dict(args), dict(args)
    if change.drop:
        if f.dest not in before or (change.value and before[f.dest][1:] != (change.value,)):
            before[f.dest] = (f.flag,) if is_bool(f) else (f.flag, change.value or ANY_VALUE)
        after.pop(f.dest, None)
    else:
        after[f.dest] = (f.flag,) if change.value is None else (f.flag, change.value)
    launch = launch_command or "<launch command>"
    before_cmd = " ".join([launch, *(a for v in before.values() for a in v)])
    after_cmd = " ".join([launch, *(a for v in after.values() for a in v)])
    if before_cmd == after_cmd:
        return None
    note = f"The message's own advice: “{change.sentence}”"
    if ANY_VALUE in before_cmd:
        note += f" {ANY_VALUE} stands for the value you passed."
    return ExampleFix(before_cmd, after_cmd, note, ("derived:message", "derived:flags"))
