"""Following a member: `self.x` and `obj.x` to where the class (or a base, in any module)
assigns it or declares it as a field, a field of an object built on the spot to what its
constructor is given, and a class that derives from a model configuration base. The steps
are the trace's (`trace.Walk`), kept apart so that each module stays small.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from errkb.ingest.origins.calls import Place, argument
from errkb.ingest.origins.exprs import reads_name, split_rest
from errkb.ingest.origins.module_facts import IMPORT_FAILED, SET_WHEN, Func, ModuleFacts

if TYPE_CHECKING:
    from errkb.ingest.origins.trace import Walk

_EMPTY = re.compile(
    r"^(\{\}|\[\]|\(\)|(dict|list|set|tuple|deque|OrderedDict)\(\)|(collections\.)?defaultdict\(\w*\))$"
)


def model_config_class(walk: Walk, cls: str) -> bool:
    """True for a class that derives from a model configuration base (`PretrainedConfig`),
    in as many steps as the snapshot shows."""
    todo, done = [cls], set[str]()
    while todo and len(done) < 8:
        c = todo.pop(0)
        if c in walk.rules.vocabulary.model_config_bases:
            return True
        if c in done or not c:
            continue
        done.add(c)
        for _, facts in walk.index.class_facts(c):
            todo.extend(facts.bases.get(c, ()))
    return False


def projected(walk: Walk, base: ast.Call, node: ast.expr, at: Place, depth: int, step: str) -> bool:
    """`Cls(a, b=x).b...`: a field of an object built right there is what the constructor
    is given for it (the other arguments say nothing of it)."""
    if not isinstance(base.func, ast.Name):
        return False
    parts: list[str] = []
    n = node
    while n is not base and isinstance(n, ast.Attribute | ast.Subscript):
        parts.append(n.attr if isinstance(n, ast.Attribute) else "")
        n = n.value
    parts.reverse()
    if not parts or not parts[0] or not all(parts[1:]):
        return False
    cls, attr = base.func.id, parts[0]
    for _, facts in walk.index.class_facts(cls):
        init = facts.funcs.get(f"{cls}.__init__")
        params = init.params if init else ("self", *facts.fields.get(cls, {}))
        if attr not in params:
            continue
        func = init or Func(f"{cls}.__init__", cls, params, (), 0, 0)
        arg = argument(ast.unparse(base), func, attr)
        if arg is None:
            return False
        walk._exprs([arg], ".".join(parts[1:]), at, depth, f"{step} <- given to {cls} as ")
        return True
    return False


def assigned(walk: Walk, cls: str, attr: str) -> tuple[str, ModuleFacts, str] | None:
    """The module and class (`cls` or a base, in any module) that assigns or declares
    `walk.attr`."""
    todo, done = [cls], set[str]()
    while todo and len(done) < 8:
        c = todo.pop(0)
        if c in done:
            continue
        done.add(c)
        for path, facts in walk.index.class_facts(c):
            if f"{c}.{attr}" in facts.assigns or attr in facts.fields.get(c, {}):
                return path, facts, c
            todo.extend(b for b in facts.bases.get(c, ()) if b not in ("object", "Module"))
    return None


def member(walk: Walk, cls: str, attr: str, rest: str, depth: int, step: str) -> bool:
    """`x.attr` for an `x` of class `cls`: where the class assigns it, or its field."""
    hit = assigned(walk, cls, attr)
    if hit is None:
        return False
    key = ("member", cls, attr, rest, depth)
    walk._remembered(key, step, lambda s: member_now(walk, hit, attr, rest, depth, s))
    return True


def member_now(
    walk: Walk, hit: tuple[str, ModuleFacts, str], attr: str, rest: str, depth: int, step: str
) -> None:
    path, facts, c = hit
    assigned = facts.assigns.get(f"{c}.{attr}", [])
    if c in walk.rules.request_types and attr in walk.rules.request_fields:
        assigned = []  # a request's field: what the request sent, whatever the class adjusts
    for method, expr, tests in assigned[:3]:
        walk.followed += 1
        place = Place(path, facts.funcs.get(method))
        if _EMPTY.match(expr.strip()):  # what it holds is put in by the code later
            walk.internal.append(f"{step}: a container {c} fills itself")
            continue
        walk._exprs([expr], rest, place, depth, f"{step} <- set in {place} to ")
        if tests:  # a value chosen by a test: the test's inputs choose it
            walk._exprs([tests], "", place, depth, f"{step} <- set in {place} when ")
    if not assigned:
        field_of(walk, c, attr, facts, path, rest, depth, step)


def self_attr(walk: Walk, attr: str, rest: str, at: Place, depth: int, step: str) -> None:
    owner = at.func.owner if at.func else ""
    if owner and member(walk, owner, attr, rest, depth, step):
        return
    if attr.startswith("_"):
        walk.internal.append(f"{step}: private state of {owner or 'the object'}")
    else:
        walk.unknown.append(f"{step}: not traced")


def field_of(
    walk: Walk, cls: str, attr: str, facts: ModuleFacts, path: str, rest: str, depth: int, step: str
) -> None:
    """A declared field: a request's, a settings class's, else what its constructor gets."""
    if cls in walk.rules.request_types:
        walk.found.append(("request_field", f"request: {attr}", f"{step}: a request field"))
    elif cls in walk.rules.flag_types and walk.rules.flag(attr):
        flag = walk.rules.flag(attr) or attr
        walk.found.append(("flag", flag, f"{step}: a server setting ({flag})"))
    else:
        fields = tuple(facts.fields.get(cls, {}))
        init = Func(f"{cls}.__init__", cls, ("self", *fields), (), 0, 0)
        walk._passed(init, attr, rest, Place(path, None), depth, f"{step}: field of {cls}")


def typed(walk: Walk, root: str, rest: str, at: Place, depth: int, step: str) -> None:
    func = at.func
    annotation = func.annotation(root) if func else ""
    cls = annotation.strip("'\" ").split("[")[-1].strip("]'\" ").rsplit(".", 1)[-1]
    cls = cls.split("|")[0].strip()
    attr, more = split_rest(rest)
    if cls in walk.rules.request_types and attr in walk.rules.request_fields:
        walk.found.append(("request_field", f"request: {attr}", f"{step}: a request field"))
        return
    if cls.lstrip("_")[:1].isupper():
        found, unknown = len(walk.found) + len(walk.internal), len(walk.unknown)
        if member(walk, cls, attr, more, depth, step):
            added = walk.unknown[unknown:]
            if len(walk.found) + len(walk.internal) > found or not added:
                return
            if not all(u.endswith(" found") and ": no caller of " in u for u in added):
                return
            # the class is built where no call shows it (a decoder: `msgspec.convert(d, type=C)`,
            # `C(**fields)`): what the function's callers pass says more
            del walk.unknown[unknown:]
    walk._name(root, rest, at, depth, step)


def fallback(walk: Walk, name: str, at: Place) -> bool:
    """True for a module-level name set where a package's import fails."""
    assigned = walk.index.facts(at.path).globals.get(name, [])
    return any(v.startswith(IMPORT_FAILED) for v in assigned)


def module_global(walk: Walk, name: str, rest: str, at: Place, depth: int, step: str) -> None:
    """A module-level name: set where a package's import fails (`except ImportError:
    x = None`), that package's presence; else what the module assigns it."""
    assigned = walk.index.facts(at.path).globals.get(name, [])
    failed = [v[1:] for v in assigned if v.startswith(IMPORT_FAILED)]
    if failed:
        package = failed[0] or walk.index.package_of(at.path, name) or "a package"
        walk.none_passed = True  # the fallback is what a `None` test sees
        walk.found.append(
            (
                "dependency",
                f"package: {package}",
                f"{step}: set only when the {package} package can be imported (package: {package})",
            )
        )
        return
    own = [v for v in assigned if not v.startswith(SET_WHEN) and not reads_name(v, name)]
    module = Place(at.path, None)
    if not own or not walk._exprs(own, rest, module, depth, step):
        walk.unknown.append(f"{step}: not traced")
    tests = [v[1:] for v in assigned if v.startswith(SET_WHEN)]
    if tests:  # the module's own `if` chooses the value: what it tests chooses it too
        walk._exprs(list(dict.fromkeys(tests)), "", module, depth, f"{step} <- set when ")
