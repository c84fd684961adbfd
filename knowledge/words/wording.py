"""Turning code facts into words: function names into activities, guards into clauses.

Everything here reads only names and expressions; when words cannot be derived, the code itself
is quoted in backticks rather than paraphrased, so no sentence claims more than the code says.
"""

from __future__ import annotations

import ast
import shlex

from errkb.core.negation import negate
from errkb.core.records import Condition
from errkb.knowledge.facts import Involvement

MAX_CODE = 90

# Leading words of function names read as verbs ("_init_pools" -> "initializing pools").
_VERBS = {
    "init": "initializing",
    "initialize": "initializing",
    "check": "checking",
    "validate": "validating",
    "verify": "verifying",
    "load": "loading",
    "parse": "parsing",
    "create": "creating",
    "build": "building",
    "make": "making",
    "get": "getting",
    "set": "setting",
    "handle": "handling",
    "process": "processing",
    "compute": "computing",
    "calc": "calculating",
    "calculate": "calculating",
    "run": "running",
    "convert": "converting",
    "prepare": "preparing",
    "resolve": "resolving",
    "apply": "applying",
    "update": "updating",
    "register": "registering",
    "read": "reading",
    "write": "writing",
    "select": "selecting",
    "alloc": "allocating",
    "allocate": "allocating",
    "configure": "configuring",
    "setup": "setting up",
    "start": "starting",
    "launch": "launching",
    "dispatch": "dispatching",
    "forward": "running the forward pass of",
    "encode": "encoding",
    "decode": "decoding",
    "tokenize": "tokenizing",
    "quantize": "quantizing",
    "dequantize": "dequantizing",
    "normalize": "normalizing",
    "merge": "merging",
    "split": "splitting",
    "send": "sending",
    "recv": "receiving",
    "receive": "receiving",
    "schedule": "scheduling",
    "sample": "sampling",
    "generate": "generating",
    "infer": "inferring",
    "detect": "detecting",
    "adjust": "adjusting",
    "assert": "asserting",
    "ensure": "ensuring",
    "fetch": "fetching",
    "save": "saving",
    "store": "storing",
    "download": "downloading",
    "upload": "uploading",
    "add": "adding",
    "remove": "removing",
    "delete": "deleting",
    "post": "post-processing",
    "pre": "pre-processing",
    "from": "building from",
    "to": "converting to",
    "maybe": "possibly",
}
_PREPOSITIONS = frozenset("with for in on by at from to of into over without".split())
_SPECIAL = {
    "__init__": "constructing {cls}",
    "__post_init__": "checking the fields of a new {cls}",
    "__call__": "calling {cls}",
    "__new__": "creating {cls}",
    "__enter__": "entering {cls}",
    "__setattr__": "setting an attribute of {cls}",
    "__getitem__": "indexing {cls}",
}


def code(text: str) -> str:
    """Source text in backticks, shortened in the middle when very long."""
    text = " ".join(text.split())
    if len(text) > MAX_CODE:
        text = text[: MAX_CODE - 25] + " … " + text[-20:]
    return f"`{text}`"


def activity(qualname: str) -> str | None:
    """What a function is doing, as far as its name tells: `_init_pools` -> initializing pools."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    if not parts or parts[-1] == "<module>":
        return "importing the module" if parts else None
    func = parts[-1]
    cls = parts[-2] if len(parts) > 1 and parts[-2][:1].isupper() else None
    if func in _SPECIAL:
        return _SPECIAL[func].format(cls=cls or "object")
    if func[:1].isupper():
        return f"in the body of class {func}"
    words = [w for w in func.strip("_").split("_") if w]
    if len(words) > 1 and words[0].lower() == "maybe":  # `maybe_download_x`: "downloading x"
        then = activity(".".join([*parts[:-1], "_".join(words[1:])]))
        return f"possibly {then}" if then else None
    if not words or words[0].lower() not in _VERBS:
        return None
    if words[0].lower() == "forward" and len(words) == 1:
        return "running the forward pass" + (f" of `{cls}`" if cls else "")
    rest = " ".join(w.lower() for w in words[1:])
    verb = _VERBS[words[0].lower()]
    if words[1:] and words[1].lower() in _PREPOSITIONS:  # `forward_with_lora`: not "of with"
        verb = verb.removesuffix(" of").removesuffix(" to").removesuffix(" from")
    return f"{verb} {rest}".strip()


def _literal(source: str | None) -> object:
    """The Python value of a literal's source text; None when it is not a literal."""
    if source is None:
        return None
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def cli_value(source: str | None) -> str | None:
    """A default or compared value as it is typed on a command line; None for `None`/unknown."""
    value = _literal(source)
    if value is None or isinstance(value, dict | set):
        return None
    if isinstance(value, list | tuple):
        items = [cli_value(repr(v)) for v in value]
        known = [i for i in items if i is not None]
        return " ".join(known) if len(known) == len(items) else None
    text = str(value)
    return shlex.quote(text) if text else "''"


def literal_values(source: str | None) -> list[str] | None:
    """The CLI forms of a literal tuple/list/set of values (`("a", "b")` -> ["a", "b"]), in the
    order the source writes them (a set's own order changes with each process's hash seed)."""
    value = _literal(source)
    if not isinstance(value, list | tuple | set | frozenset):
        return None
    assert source is not None  # a literal was read from it
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        out = [cli_value(ast.get_source_segment(source, e) or "") for e in node.elts]
    else:
        out = [cli_value(repr(v)) for v in value]
    return [v for v in out if v is not None]


def default_words(inv: Involvement) -> str:
    """`default: X` for a flag whose default is known."""
    d = inv.definition
    if d is None or d.default is None:
        return "no default: it must be given" if d is not None and d.origin == "dataclass" else ""
    shown = cli_value(d.default)
    return f"default: {shown if shown is not None else d.default}"


def flag_name(inv: Involvement) -> str:
    """The flag as shown to a user; settings that are not options are named by their dest."""
    return inv.flag if inv.cli else f"the setting `{inv.dest}` (not a command-line option)"


def flag_state(inv: Involvement) -> str:
    """What the guard needs of a flag, in words: `--x is on`, `--x is not null`."""
    name = flag_name(inv)
    value = cli_value(inv.value) if inv.value is not None else None
    shown = value if value is not None else (inv.value or "")
    if inv.value == "None":
        shown = "unset (None)"
    polarity = inv.polarity
    if polarity == "on":
        return f"{name} is on" if is_switch(inv) else f"{name} is set"
    if polarity == "off":
        return f"{name} is off" if is_switch(inv) else f"{name} is unset or empty"
    if polarity in ("eq", "ne") and inv.value == "None":  # `x is None`: given or not
        return f"{name} is {'unset' if polarity == 'eq' else 'set'}"
    if polarity == "eq":
        return f"{name} is {shown}"
    if polarity == "ne":
        return f"{name} is not {shown}"
    if polarity == "in":
        return f"{name} is one of {', '.join(literal_values(inv.value) or [shown])}"
    if polarity == "not_in":
        return f"{name} is none of {', '.join(literal_values(inv.value) or [shown])}"
    if polarity == "other" and inv.value:
        return f"{name} {inv.value}"
    # read in a way no single value says (`not (not buckets_rule)`): the conditions list shows
    # the code; here the flag is named as the user set it
    return f"{name} set to a value the check refuses"


def is_switch(inv: Involvement) -> bool:
    """True for a flag defined as a boolean switch."""
    d = inv.definition
    return d is not None and (d.type or "").replace("Optional[", "").startswith("bool")


def _conjuncts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [c for v in node.values for c in _conjuncts(v)]
    return [node]


def condition_clauses(cond: Condition, flags: list[Involvement]) -> list[str]:
    """The guard as short clauses; a clause about a linked flag is said with the flag's name."""
    if cond.kind == "for":
        return [
            f"it iterates {code(cond.expr)}"
            if cond.holds
            else f"a loop over {code(cond.expr)} ended without `break`"
        ]
    if cond.kind == "with":
        return [f"it runs inside {code('with ' + cond.expr)}"]
    if cond.kind == "except":
        return [f"{code(cond.expr)} was caught"]
    if cond.kind == "try":
        return [] if cond.expr.startswith("try") else [f"in the `{cond.expr}` part of a `try`"]
    if cond.kind == "case":
        return [code(cond.expr) if cond.holds else f"not {code(cond.expr)}"]
    try:
        node = ast.parse(cond.expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return [code(cond.text)]
    node = node if cond.holds else negate(node)
    resolved = dict(cond.resolved)
    out = []
    for part in _conjuncts(node):
        text = ast.unparse(part)
        # Only the condition a link was recorded from carries its polarity.
        linked = [
            f
            for f in flags
            if f.in_condition and f.condition == cond.text and _reads(text, f, resolved)
        ]
        if len(linked) == 1 and _simple(part, resolved):
            f = linked[0]
            via = f" ({code(f.via)})" if f.via else ""
            out.append(flag_state(f) + via)
        else:
            out.append(code(text))
    return out


def _reads(text: str, inv: Involvement, resolved: dict[str, str]) -> bool:
    if "." + inv.dest in text or f"'{inv.dest}'" in text:
        return True
    return inv.via is not None and inv.via in text and inv.via in resolved


def _simple(node: ast.expr, resolved: dict[str, str]) -> bool:
    """A flag test on its own: `a.x`, `not a.x`, `a.x == v`, or a local resolved to one."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    if isinstance(node, ast.Name):
        return node.id in resolved
    if isinstance(node, ast.Attribute | ast.Call):
        return True
    return isinstance(node, ast.Compare) and len(node.ops) == 1
