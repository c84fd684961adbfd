"""Example fixes for request fields and environment variables the guard compares with a value.

`input_fixes` handles numbers (a value the test rejects and one it accepts) and an environment
variable tested for being set. This module adds the tests that name the value themselves:
`os.environ["X"] == "vectorized_5d"` raising gives the line that sets it and the one that does
not; `req.mode not in ("a", "b")` gives a body with "a"; `req.image_path is not None` gives the
body with and without the field. Every guard conjunct must hold for the raise, so making one of
them fail is enough: the after side changes only the input the test reads.
"""

from __future__ import annotations

import ast
import json
import shlex
from dataclasses import dataclass

from errkb.knowledge.facts import ExampleFix, Provenance
from errkb.knowledge.origins.inputs import Input
from errkb.knowledge.words.reading import Reading

_PROV: tuple[Provenance, ...] = ("derived:conditions",)
OTHER = "<another value>"
ANY = "<your value>"


@dataclass(frozen=True)
class ValueTest:
    """What a conjunct needs of one input for the raise: equal to / one of / other than the
    `values`, or present / absent (`values` empty)."""

    kind: str  # "eq" | "ne" | "present" | "absent"
    values: tuple[str, ...] = ()


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
    return None


def value_test(r: Reading, found: Input, node: ast.expr) -> ValueTest | None:
    """The conjunct as a `ValueTest` on `found`, or None when it is another kind of test."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or r.reads(node.left) != found:
        return None
    op, right = node.ops[0], node.comparators[0]
    if isinstance(right, ast.Constant) and right.value is None:
        if isinstance(op, ast.Is | ast.Eq):
            return ValueTest("absent")
        return ValueTest("present") if isinstance(op, ast.IsNot | ast.NotEq) else None
    values = _strings(right)
    if values is None:
        return None
    if isinstance(op, ast.Eq | ast.In) and (len(values) == 1 or isinstance(op, ast.In)):
        return ValueTest("eq", values)
    if isinstance(op, ast.NotEq | ast.NotIn):
        return ValueTest("ne", values)
    return None


def _first(r: Reading, found: Input) -> ValueTest | None:
    for node in r.tests_on(found):
        test = value_test(r, found, node)
        if test is not None:
            return test
    return None


def request_value_example(r: Reading) -> ExampleFix | None:
    """A request body before (the guard holds) and after (the field's test fails)."""
    for found in (i for i in r.inputs if i.kind == "request_field"):
        test = _first(r, found)
        if test is None:
            continue
        name, listed = found.name, ", ".join(json.dumps(v) for v in test.values)
        before: dict[str, str]
        after: dict[str, str]
        if test.kind == "eq":
            before, after = {name: test.values[0]}, {name: OTHER}
            said = f"the guard rejects {listed}"
        elif test.kind == "ne":
            before, after = {name: ANY}, {name: test.values[0]}
            said = f"the guard accepts only {listed}"
        elif test.kind == "present":
            before, after = {name: ANY}, {}
            said = "the error is raised when the field is given"
        else:
            before, after = {}, {name: ANY}
            said = "the error is raised when the field is missing"
        owner = f" ({found.owner})" if found.owner else ""
        note = f"The {name} field of the request{owner}: {said}."
        return ExampleFix(json.dumps(before), json.dumps(after), note, _PROV)
    return None


def environment_value_example(r: Reading, launch: str | None) -> ExampleFix | None:
    """The command line with the environment value that leads to the raise, and without it."""
    cmd = launch or "<launch command>"
    for found in (i for i in r.inputs if i.kind == "environment"):
        test = _first(r, found)
        if test is None or test.kind not in ("eq", "ne"):
            continue
        value, name = test.values[0], found.name
        default = found.default.strip("'\"") if found.default else None
        if test.kind == "eq":
            if default == value:
                continue  # unsetting it would not help, and no other value is named
            before, after = f"{name}={shlex.quote(value)} {cmd}", cmd
            note = f"The error needs {name} set to {value!r}; the after line leaves it unset."
        else:
            before, after = cmd, f"{name}={shlex.quote(value)} {cmd}"
            if default == value:
                before = f"{name}={OTHER} {cmd}"
            note = f"The error is raised unless {name} is {value!r}; the after line sets it."
        return ExampleFix(before, after, note, _PROV)
    return None
