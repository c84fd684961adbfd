"""What the extraction of a unit read outside it, as a digest: when cached sites may be reused.

A unit's sites depend on more than its text: the module and class statements binding names it
uses, what its class assigns to `self.` those names, and the calls of its function in the module
(what its parameters are traced to). The cached `UnitResult` holds a digest of these (its
context), and `ingest.extract.incremental` reuses its sites only when the new file gives the
same digest. Import, function and class statements count by their kind and name alone.
"""

from __future__ import annotations

import ast
import re

from errkb.core.records import Site
from errkb.ingest.extract.attributes import ClassAttributes
from errkb.ingest.extract.attributes import used as used_attributes
from errkb.ingest.extract.callers import call_texts
from errkb.ingest.extract.scope import Scope
from errkb.ingest.extract.unit_keys import Plan, digest
from errkb.ingest.extract.units import Unit

IDENT = re.compile(r"[^\W\d]\w*")
# Statements that bind no name (`Scope.binds` finds none in them): skipped without asking.
_INERT = frozenset(
    {ast.Expr, ast.Pass, ast.Return, ast.Raise, ast.Assert, ast.Global, ast.Nonlocal}
)


def context_digests(
    tree: ast.Module,
    plan: Plan,
    units: list[Unit],
    names: dict[int, frozenset[str]],
    attributes: ClassAttributes,
) -> dict[int, str]:
    """For each unit in `names` (the identifiers it uses), a digest of the module and class
    statements binding those names, of what its class assigns to `self.` those names, and of
    the calls of its function in the module (what its parameters are traced to)."""
    lines, text = plan.lines, plan.text
    module = _bindings(tree.body, lines)
    owners = {units[k].owner_line for k in names}
    classes = {
        s.lineno: _bindings(s.body, lines)
        for s in tree.body
        if isinstance(s, ast.ClassDef) and s.lineno in owners
    }
    out = {}
    for k, used in names.items():
        owner = classes.get(units[k].owner_line, {})
        u = units[k]
        mine = attributes.get(u.owner, {}) if u.owner else {}
        calls = "\0".join(call_texts(text, u.name, u.owner))
        parts = [_used(module, used), _used(owner, used), used_attributes(mine, used), calls]
        out[k] = digest("\1".join(parts))
    return out


def read_outside(sites: list[Site]) -> frozenset[str]:
    """The identifiers in the values the sites' conditions were traced to."""
    return frozenset(
        name
        for site in sites
        for condition in site.conditions
        for _, value in condition.resolved
        for name in IDENT.findall(value)
    )


def _bindings(body: list[ast.stmt], lines: list[str]) -> dict[str, list[str]]:
    """name -> the source of each statement of `body` that binds it, in order.

    An import, function or class statement counts as `import` / `def name` / `class name`: what
    a lookup of such a name yields (`scope.Opaque`) does not depend on the rest of it.
    """
    scope = Scope(ast.Module(body=[], type_ignores=[]), body)
    out: dict[str, list[str]] = {}
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            word = "class" if kind is ast.ClassDef else "def"
            out.setdefault(stmt.name, []).append(f"{word} {stmt.name}")  # type: ignore[attr-defined]
            continue
        if kind in _INERT:
            continue
        names = scope.binds(stmt)
        if not names:
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            source = "import"  # an imported name is never resolved further
        else:
            source = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
        for name in names:
            out.setdefault(name, []).append(source)
    return out


def _used(bindings: dict[str, list[str]], names: frozenset[str]) -> str:
    return "\0".join(f"{n}\0" + "\0".join(bindings[n]) for n in sorted(names & bindings.keys()))
