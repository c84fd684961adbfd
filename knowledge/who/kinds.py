"""What each kind of error means, beyond its own message: the explanation's opening sentence and
the solution that kind calls for.

A ValueError's message usually says what is wrong; other kinds need a word of context that the
class alone carries. A NotImplementedError says the combination is not written yet (and the
guards before it show which ones are); a failed assert is an internal check, with no message
most of the time; a KeyError from a lookup names a missing key; an ImportError names a package
to install; a TypeError from an `isinstance` check names the types that are accepted. All of it
comes from the site's own code: its class, kind, check, guards and snippet.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from errkb.core.records import Site
from errkb.knowledge.facts import Fix
from errkb.knowledge.who.evidence import in_test_code

# `pip install pkg`, then the words that look like packages or options (`-U`, `x>=1`, `a_b`),
# not the sentence going on after it ("... first").
_PIP = re.compile(r"pip3? install [^\s`'\"]+(?: (?=[^\s`'\"]*[-=<>\[_.0-9])[^\s`'\"]+)*")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))")
MAX_LISTED = 6  # implemented choices or accepted types named in a sentence


@dataclass(frozen=True)
class KindNote:
    """The kind's opening sentence and its solutions, first in the entry."""

    text: str
    fixes: tuple[Fix, ...] = ()


# Who-hits-it classes that make an assert a check of the user's own input, not an internal one.
USER_INPUTS = frozenset({"flag", "request_field", "environment", "model_config", "hardware"})


def kind_note(site: Site, who: str | None = None) -> KindNote | None:
    """The note for the site's kind of error, or None when its message says enough; `who` is
    the who-hits-it class, when known."""
    if site.kind == "assert":
        return _assert(site, who in USER_INPUTS)
    if site.kind == "lookup":
        return _lookup(site)
    if site.kind == "indirect":
        return KindNote(
            f"The exception's class is chosen at run time (the code raises {site.exception}(...)),"
            " so the class printed in the traceback may differ from one run to another."
        )
    if site.exception == "NotImplementedError":
        return _not_implemented(site)
    if site.exception in ("ImportError", "ModuleNotFoundError"):
        return _import(site)
    if site.exception == "TypeError":
        return _type_check(site)
    return None


def _assert(site: Site, on_input: bool = False) -> KindNote:
    in_tests = in_test_code(site.path)
    if in_tests:
        text = "A test failed: this assert is a check of the project's own tests or test tools."
    elif on_input:  # `assert cfg.tp_size % cfg.dp_size == 0`: a check of the settings
        text = (
            "A check of the settings or input failed: the code asserts a condition on them "
            "that must hold at this point, and it did not."
        )
    else:
        text = (
            "An internal check failed: the code asserts a condition that must hold at this "
            "point, and it did not."
        )
    if not site.template.segments:
        text += " The assert has no message: the traceback shows only its line."
    if not in_tests:
        text += (
            " Asserts are skipped when Python runs with -O, so with that option the same input "
            "fails later, elsewhere."
        )
    return KindNote(text)


def _lookup(site: Site) -> KindNote:
    mapping = site.check.split("[", 1)[0]
    text = f"The key printed after KeyError is not in {mapping}."
    fixes: tuple[Fix, ...] = ()
    if "load_weights" in site.qualname:
        text += (
            " While the weights are loaded, each tensor name of the checkpoint is looked up "
            "among the model's parameters: a name the model does not define means the "
            "checkpoint and the model code disagree."
        )
        fixes = (
            Fix(
                "model",
                "Check that the checkpoint is one this model class loads: the architecture in "
                "its config.json, its quantization, and a release that supports that variant",
                ("derived:conditions",),
            ),
            Fix(
                "model",
                "Read the missing name printed after KeyError. A quantization scale or zero "
                "point (a name ending in scale, scale_inv, zeros or g_idx) means the checkpoint "
                "is quantized in a way this loader does not map: serve it with the quantization "
                "method its config.json names (quantization_config), or with a release that "
                "loads that format. A layer the model class does not have (an extra draft or "
                "multi-token-prediction layer, a vision tower) means a checkpoint of another "
                "variant of the model. Another prefix (model. against language_model.) means "
                "the checkpoint was saved by other code than this release expects.",
                ("derived:conditions",),
            ),
        )
    return KindNote(text, fixes)


def _not_implemented(site: Site) -> KindNote:
    text = "This combination is not implemented yet: the code stops here rather than guess."
    done = _implemented(site)
    if done:
        text += f" The cases written before it handle {_listed(done)}."
    elif not site.conditions and "." in site.qualname:
        cls, method = site.qualname.rsplit(".", 2)[-2:]
        text += (
            f" {method} of {cls} is a placeholder that subclasses fill in: the class in use "
            "does not provide it."
        )
    return KindNote(text)


def _implemented(site: Site) -> list[str]:
    """The values earlier branches handle: `x == "a"`, `x in (...)` tests that had to fail."""
    found: list[str] = []
    for c in site.conditions:
        if c.holds or c.kind not in ("if", "elif"):
            continue
        found.extend(_compared_values(c.expr))
    return list(dict.fromkeys(found))


def _compared_values(expr: str) -> list[str]:
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return []
    op, right = node.ops[0], node.comparators[0]
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
        return [repr(right.value)]
    if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return [repr(e.value) for e in right.elts if isinstance(e, ast.Constant)]
    return []


def _import(site: Site) -> KindNote:
    message = site.template.literal_text
    pip = _PIP.search(message)
    modules = _imported(site)
    if pip:
        text = f"A package is missing; the message gives the command: {pip.group(0)}."
        fix = Fix("advice", f"Run {pip.group(0)}", ("derived:message",), command=pip.group(0))
        return KindNote(text, (fix,))
    if modules:
        top = modules[0].split(".", 1)[0]
        text = (
            f"A package is missing or broken: importing {modules[0]} failed, and this code "
            "needs it for the feature in use."
        )
        fix = Fix(
            "advice",
            f"Install the package that provides {top} (its PyPI name is often the same), in "
            "the version this release expects",
            ("derived:conditions",),
            command=f"pip install {top}",
        )
        return KindNote(text, (fix,))
    return KindNote("A package this code needs could not be imported.")


def _imported(site: Site) -> list[str]:
    """Modules imported in the lines shown above the raise (its `try:` block)."""
    above = site.snippet.lines[: max(0, site.snippet.raise_start - site.snippet.start)]
    found = []
    for line in above:
        m = _IMPORT.match(line)
        if m:
            found.append(m.group(1) or m.group(2))
    return found[::-1]  # nearest first


def _type_check(site: Site) -> KindNote | None:
    accepted: list[str] = []
    for c in site.conditions:
        accepted.extend(_isinstance_types(c.expr, c.holds))
    if not accepted:
        return None
    text = (
        f"A value of the wrong type was given: this code accepts {_listed(accepted, 'or')}. "
        "The message, or the traceback's last lines, show the type that was passed."
    )
    return KindNote(text)


def _isinstance_types(expr: str, holds: bool) -> list[str]:
    """The types of a failed `isinstance` test (`not isinstance(x, T)` holding, or
    `isinstance(x, T)` not holding)."""
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return []
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    call = node.operand if isinstance(node, ast.UnaryOp) else node
    if negated == (not holds):  # the isinstance test itself held: not a failed check
        return []
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "isinstance"):
        return []
    if len(call.args) != 2:
        return []
    kinds = call.args[1]
    elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return [ast.unparse(e) for e in elts]


def _listed(items: list[str], joiner: str = "and") -> str:
    shown = items[:MAX_LISTED]
    more = len(items) - len(shown)
    if more:
        return ", ".join(shown) + f" {joiner} {more} more"
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + f" {joiner} {shown[-1]}"
