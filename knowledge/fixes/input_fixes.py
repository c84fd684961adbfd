"""Solutions and example fixes for request fields and environment variables.

Each solution names the input, what the guard needs of it (in the words of the guard's facts),
the allowed values when the code states them, and what to change; a request field gets a
request body before/after, an environment variable the line that sets or unsets it.
"""

from __future__ import annotations

import ast
import json

from errkb.knowledge.facts import ExampleFix, Fix, Provenance
from errkb.knowledge.origins.inputs import Input
from errkb.knowledge.origins.notes import constant_values
from errkb.knowledge.origins.values import raising_and_fixing
from errkb.knowledge.who.said import REQUEST_DATA_REFUSED
from errkb.knowledge.words import message
from errkb.knowledge.words.phrases import Speaker, negate
from errkb.knowledge.words.reading import Reading

_PROV: tuple[Provenance, ...] = ("derived:conditions",)


def _speaker(r: Reading) -> Speaker:
    # with the module's constants, as the facts have them: "send a value for which the quality
    # is "lossless" or "high"", not "... is in quality levels"
    resolved = {k: v for c in r.site.conditions for k, v in c.resolved}
    return Speaker(list(r.flags), resolved, r.finder, r.glossary, constant_values(r.site))


def _needed(r: Reading, found: Input) -> tuple[str, str] | None:
    """(what raises, what avoids it) for one input, in words; None when the guard is silent."""
    tests = r.tests_on(found)
    if not tests:
        return None
    sp = _speaker(r)
    raises = " and ".join(sp.say(t) for t in tests)
    avoids = " or ".join(sp.say(negate(t)) for t in tests)
    return raises, avoids


def _none_test(node: ast.expr) -> bool:
    """`x is None` / `x is not None`: a presence check, not a value the example can pick."""
    return isinstance(node, ast.Compare) and any(
        isinstance(c, ast.Constant) and c.value is None for c in node.comparators
    )


def _values(r: Reading, found: Input) -> tuple[int | float, int | float] | None:
    tests = [t for t in r.tests_on(found) if not _none_test(t)]
    return raising_and_fixing(tests, lambda n: r.finder.of(n) == found) if tests else None


def _presence(r: Reading, found: Input) -> str | None:
    """What to do when the guard tests only whether the field is there: leave it out (`if
    req.lidar:`, `if req.lidar is not None:`) or send it (`if not req.prompt:`); None when it
    tests a value."""
    tests = r.tests_on(found)
    if len(tests) != 1:
        return None
    (t,) = tests
    if r.reads(t) == found:
        return f"Leave {found.name} out of the request (or send it empty or false)"
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and r.reads(t.operand) == found:
        return f"Send {found.name} in the request"
    if _none_test(t) and isinstance(t, ast.Compare) and r.reads(t.left) == found:
        is_set = isinstance(t.ops[0], ast.IsNot)  # `x is not None`: raised when it is sent
        return f"Leave {found.name} out of the request" if is_set else f"Send {found.name}"
    return None


def asked_of(r: Reading) -> str:
    """The message's first sentence, as a reader sees it ("" when it has no words)."""
    if not r.site.template.literal_text.strip():
        return ""
    said = message.sentences(message.display(r.site.template).strip())
    first = said[0].rstrip(".;:, ") if said else ""
    return first if len(first) <= 200 else ""


def request_fixes(r: Reading) -> list[Fix]:
    """Change a request field: what the guard rejects and a value it accepts."""
    out = []
    for found in (i for i in r.inputs if i.kind == "request_field"):
        need = _needed(r, found)
        values = _values(r, found)
        where = f"the request field {found.name}" + (f" (of {found.owner})" if found.owner else "")
        alias = dict(r.finder.vocab.request_aliases).get(found.name)
        if alias:
            where += f" ({alias})"
        presence = _presence(r, found)
        asked = asked_of(r)
        if presence is not None:  # the field is sent, or left out: the other way round
            text = presence
        elif need is not None and ("`" not in need[1] or not asked):
            text = f"Change {where}: the error is raised when {need[0]}"
            text += f"; send a value for which {need[1]}"
        elif asked:  # the guard reads as code: the message's own words say what it needs
            text = f"Change {where} to what the message asks for: “{asked}”"
        else:
            text = f"Change {where}: the message is about it; send a value that it allows"
        if values is not None:
            text += f", for example {found.name}: {json.dumps(values[1])}"
        prov: tuple[Provenance, ...] = _PROV if need is not None else ("derived:message",)
        out.append(Fix("request_field", text + ".", prov, input=found.name))
    if not out and any(c.text == REQUEST_DATA_REFUSED for c in r.clues):
        text = (
            "Send smaller or readable media: resize or compress the image, video or audio the "
            "request sends (or links to), check that the file opens in another program, and "
            "send the request again."
        )
        out.append(Fix("request_field", text, ("derived:message",)))
    return out


def _env_state(r: Reading, found: Input) -> bool | None:
    """True when the guard needs the variable set (truthy), False when unset, None if unclear."""
    for t in r.tests_on(found):
        if r.reads(t) == found:
            return True
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and r.reads(t.operand) == found:
            return False
    return None


def environment_fixes(r: Reading, launch: str | None) -> list[Fix]:
    """Set or unset an environment variable the guard reads or the message names."""
    out = []
    for found in (i for i in r.inputs if i.kind == "environment"):
        state = _env_state(r, found)
        need = _needed(r, found)
        in_guard = any(
            found.name in text
            for c in r.site.conditions
            for text in (c.expr, *(v for _, v in c.resolved))
        )
        dflt = f" (default when unset: {found.default})" if found.default else ""
        command: str | None = None
        if state is True:
            text = (
                f"Unset the environment variable {found.name}{dflt} (or set it to 0) where "
                "the process starts: the error is raised while it is set"
            )
            command = f"unset {found.name}"
        elif state is False:
            text = (
                f"Set the environment variable {found.name}{dflt} where the process starts: "
                "the error is raised while it is unset or false"
            )
            command = f"export {found.name}=1"
        else:
            how = (
                f"the error is raised when {need[0]}"
                if need
                else ("the guard reads it" if in_guard else "the message names it")
            )
            text = f"Check the environment variable {found.name}{dflt} where the process starts: "
            text += how
        prov = _PROV if (state is not None or need or in_guard) else ("derived:message",)
        out.append(Fix("environment", text + ".", prov, input=found.name, command=command))
    return out


def request_example(r: Reading) -> ExampleFix | None:
    """A request body before (raises) and after (does not), for a numeric request field."""
    for found in (i for i in r.inputs if i.kind == "request_field"):
        values = _values(r, found)
        if values is None:
            continue
        before, after = (json.dumps({found.name: v}) for v in values)
        note = (
            f"The {found.name} field of the request"
            + (f" ({found.owner})" if found.owner else "")
            + f": {json.dumps(values[0])} is rejected by the guard, {json.dumps(values[1])} is not."
        )
        return ExampleFix(before, after, note, _PROV)
    return None


def environment_example(r: Reading, launch: str | None) -> ExampleFix | None:
    """The command line with and without the environment variable that leads to the raise."""
    cmd = launch or "<launch command>"
    for found in (i for i in r.inputs if i.kind == "environment"):
        state = _env_state(r, found)
        if state is None:
            continue
        with_var = f"{found.name}=1 {cmd}"
        before, after = (with_var, cmd) if state else (cmd, with_var)
        note = (
            f"The error needs {found.name} {'set' if state else 'unset or false'}; "
            f"the after line {'leaves it unset' if state else 'sets it'}."
        )
        return ExampleFix(before, after, note, _PROV)
    return None
