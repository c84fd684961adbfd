"""Linking raise sites to flags: which options a message names or a guard reads (pure).

A flag is involved in a site when
- its flag string (`--enable-unified-memory`) appears in the literal text of the message, or a
  placeholder of the message reads it (side "message"); or
- a guard condition reads its dest as an attribute (`get_memory().enable_unified_memory`,
  `self.server_args.tp_size`), directly or through a local name resolved to such a read
  (`pd_enabled` -> `get_disagg().disaggregation_mode != "null"`) (side "condition").

The condition side records what the guard needs of the flag (`polarity`): on / off (truthy or
falsy), eq / ne / in / not_in a value, or other (any other use), with negations applied, and
whether the guard *requires* it (`required`: every way of reaching the raise needs it, so
changing that flag alone avoids the guard) or it is one alternative among several.

Rule against false links: dests are plain words and most attribute reads of `.model` or `.port`
are not the server's options. An attribute read counts only when the object it is read from
looks like settings - a name or attribute ending in `args`, `settings`, `options` or `opts`, or
a no-argument `get_*()` call (the runtime's settings namespaces) - or when the dest itself is
specific: at least three words or 16 characters (`enable_unified_memory`,
`disaggregation_mode`), which projects do not reuse for unrelated attributes. Two-word names such
as `model_config` or `tp_size` are often other objects' attributes (`self.model_config` is a
model's config object, not `--model-config`), so they need a settings-like object. Flags that
come from argparse calls (scripts, benchmarks, tools) are linked from `args.x`-like reads only in
the file that defines them or in the settings module: a benchmark's `--backend` says nothing
about `self.args.backend` elsewhere. Bare local names count only through their resolution.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ingest.records import Condition, FlagDef, Site

_SETTINGS_SUFFIXES = ("args", "settings", "options", "opts")
_SPECIFIC_MIN_LEN = 16
_BOOLEAN_KINDS = frozenset({"if", "elif", "else", "while", "assert"})
_MAX_DEPTH = 8  # local-name resolution chains; cycles and deep chains stop here
_FLIP = {
    "==": "!=",
    "!=": "==",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "in": "not in",
    "not in": "in",
    "is": "is not",
    "is not": "is",
}
_MIRROR = {
    "==": "==",
    "!=": "!=",
    "<": ">",
    ">": "<",
    "<=": ">=",
    ">=": "<=",
    "is": "is",
    "is not": "is not",
}
_OPS: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


@dataclass(frozen=True)
class _Use:
    """One read of a flag inside a condition and what the condition needs of it."""

    dest: str
    polarity: str
    value: str | None
    required: bool
    via: str | None  # the local name it was reached through


def looks_like_settings(obj: ast.expr) -> bool:
    """True for `args`, `server_args`, `self.server_args`, `get_memory()`-style objects."""
    if isinstance(obj, ast.Call):
        name = ast.unparse(obj.func).split(".")[-1]
        return name.startswith("get_") and not obj.args and not obj.keywords
    name = obj.attr if isinstance(obj, ast.Attribute) else getattr(obj, "id", "")
    return name.lower().endswith(_SETTINGS_SUFFIXES)


def is_specific(dest: str) -> bool:
    """A dest distinctive enough to be linked from any attribute read."""
    return dest.count("_") >= 2 or (dest.count("_") >= 1 and len(dest) >= _SPECIFIC_MIN_LEN)


@dataclass(frozen=True)
class Reads:
    """Which reads count as reads of a catalog flag at one site (the rule against false links).

    A settings-class field is read from a settings-like object, or from any object when its
    name is specific. An argparse flag (scripts, benchmarks) is read only from an args-like
    object, and only in the file that defines it or in the settings module itself.
    """

    catalog: Mapping[str, FlagDef]
    site_path: str = ""
    server_paths: frozenset[str] = frozenset()

    def dest(self, node: ast.AST) -> str | None:
        """The dest a node reads (`x.dest` or `getattr(x, "dest", ...)`), if it counts."""
        if isinstance(node, ast.Attribute):
            name, obj = node.attr, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name, obj = node.args[1].value, node.args[0]
        else:
            return None
        flag = self.catalog.get(name)
        if flag is None:
            return None
        settings = looks_like_settings(obj)
        if flag.origin == "dataclass":
            return name if settings or is_specific(name) else None
        own = flag.path == self.site_path or flag.path in self.server_paths
        return name if settings and own else None


class _Analyzer:
    """Walks one condition's boolean structure, tracking the truth value the raise needs."""

    def __init__(self, reads: Reads, resolved: Mapping[str, str]) -> None:
        self.reads = reads
        self.resolved = resolved
        # Uses found through a resolved name, by (name, required, via, depth): a name read
        # several times, or reached along several resolution chains, is expanded only once.
        self._through: dict[tuple[str, bool, str | None, int], list[_Use]] = {}

    def _deref(self, node: ast.expr) -> tuple[ast.expr, str | None]:
        """A local name resolved to a flag read stands for that read (`tp = args.tp_size`)."""
        if isinstance(node, ast.Name) and node.id in self.resolved:
            sub = _parse(self.resolved[node.id])
            if sub is not None and self.reads.dest(sub) is not None:
                return sub, node.id
        return node, None

    def uses(
        self, node: ast.AST, need: bool, required: bool, via: str | None, depth: int = 0
    ) -> Iterator[_Use]:
        if depth > _MAX_DEPTH:
            return
        if (dest := self.reads.dest(node)) is not None:
            yield _Use(dest, "on" if need else "off", None, required, via)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield from self.uses(node.operand, not need, required, via, depth)
        elif isinstance(node, ast.BoolOp):
            # `a and b` needed true (or `a or b` needed false) needs every operand; otherwise
            # each operand is only one way among several.
            every = isinstance(node.op, ast.And) == need
            for value in node.values:
                yield from self.uses(value, need, required and every, via, depth)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            yield from self._compare(node, need, required, via, depth)
        elif isinstance(node, ast.Name) and node.id in self.resolved:
            sub = _parse(self.resolved[node.id])
            if sub is not None:
                yield from self.uses(sub, need, required, via or node.id, depth + 1)
        else:
            yield from self._other(node, required, via, depth)

    def _compare(
        self, node: ast.Compare, need: bool, required: bool, via: str | None, depth: int
    ) -> Iterator[_Use]:
        op = _OPS.get(type(node.ops[0]))
        (left, via_left), (right, via_right) = map(self._deref, (node.left, node.comparators[0]))
        via = via or via_left or via_right
        dest = self.reads.dest(left)
        if dest is None and op in _MIRROR and self.reads.dest(right) is not None:
            left, right, op = right, left, _MIRROR[op]  # `"null" != args.mode`
            dest = self.reads.dest(left)
        if op is None or dest is None or self.reads.dest(right) is not None:
            yield from self._other(node, required, via, depth)
            return
        op = op if need else _FLIP[op]
        value = ast.unparse(right)
        polarity = {
            "==": "eq",
            "is": "eq",
            "!=": "ne",
            "is not": "ne",
            "in": "in",
            "not in": "not_in",
        }.get(op)
        if polarity is None:
            polarity, value = "other", f"{op} {value}"
        yield _Use(dest, polarity, value, required, via)
        yield from self._other(right, required, via, depth)

    def _other(self, node: ast.AST, required: bool, via: str | None, depth: int) -> Iterator[_Use]:
        """Any read of a flag in a non-boolean position: its use is `other`."""
        for child in ast.walk(node):
            if (dest := self.reads.dest(child)) is not None:
                yield _Use(dest, "other", None, required, via)
            elif isinstance(child, ast.Name) and child.id in self.resolved and depth < _MAX_DEPTH:
                key = (child.id, required, via or child.id, depth + 1)
                if (found := self._through.get(key)) is None:
                    sub = _parse(self.resolved[child.id])
                    found = [] if sub is None else list(self._other(sub, *key[1:]))
                    self._through[key] = found
                yield from found


@lru_cache(maxsize=65536)
def _parse(expr: str) -> ast.expr | None:
    # Cached: the same guard and placeholder texts recur across the sites of a function, and
    # nothing here mutates the returned tree.
    try:
        return ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def message_flags(literal: str) -> list[str]:
    """`--flag-name` tokens in a message's literal text, in order, without duplicates."""
    found: list[str] = []
    i = literal.find("--")
    while i != -1:
        j = i + 2
        while j < len(literal) and (literal[j].isalnum() or literal[j] in "-_"):
            j += 1
        token = literal[i:j].rstrip("-_")
        before = literal[i - 1] if i else " "
        if len(token) > 2 and token[2].isalpha() and not (before.isalnum() or before == "-"):
            if token not in found:
                found.append(token)
        i = literal.find("--", j)
    return found


def _condition_uses(cond: Condition, reads: Reads) -> list[_Use]:
    node = _parse(cond.expr)
    if node is None:
        return []
    analyzer = _Analyzer(reads, dict(cond.resolved))
    if cond.kind in _BOOLEAN_KINDS:
        return list(analyzer.uses(node, cond.holds, True, None))
    return list(analyzer._other(node, True, None, 0))


def flag_involvements(site: Site, catalog: Mapping[str, FlagDef]) -> list[dict[str, Any]]:
    """Flags involved in a site; `catalog` maps dest name -> FlagDef for the snapshot."""
    return Linker(catalog).involvements(site)


class Linker:
    """Links many sites against one catalog, building the catalog's lookups only once.

    Guard analyses are memoized per (condition, site path): the enclosing guards of one function
    are shared by all its raise sites, and a result depends on the site only through its path.
    """

    def __init__(self, catalog: Mapping[str, FlagDef]) -> None:
        self.catalog = catalog
        self.by_flag = {name: dest for dest, f in catalog.items() for name in f.flags}
        self.server_paths = frozenset(f.path for f in catalog.values() if f.origin == "dataclass")
        self._reads: dict[str, Reads] = {}
        self._uses: dict[tuple[Condition, str], list[_Use]] = {}
        self._placeholders: dict[tuple[str, str], list[str]] = {}

    def _reads_for(self, path: str) -> Reads:
        if (reads := self._reads.get(path)) is None:
            reads = self._reads[path] = Reads(self.catalog, path, self.server_paths)
        return reads

    def _condition_uses(self, cond: Condition, path: str) -> list[_Use]:
        key = (cond, path)
        if (uses := self._uses.get(key)) is None:
            uses = self._uses[key] = _condition_uses(cond, self._reads_for(path))
        return uses

    def _placeholder_dests(self, text: str, path: str) -> list[str]:
        key = (text, path)
        if (dests := self._placeholders.get(key)) is None:
            node = _parse(text)
            reads = self._reads_for(path)
            dests = [
                dest
                for child in (ast.walk(node) if node is not None else ())
                if (dest := reads.dest(child)) is not None
            ]
            self._placeholders[key] = dests
        return dests

    def involvements(self, site: Site) -> list[dict[str, Any]]:
        """Flags involved in one site, most-involved first."""
        catalog = self.catalog
        out: dict[str, dict[str, Any]] = {}

        def entry(dest: str) -> dict[str, Any]:
            if dest not in out:
                f = catalog[dest]
                out[dest] = {
                    "flag": f.flags[0],
                    "dest": dest,
                    "sides": [],
                    "polarity": None,
                    "value": None,
                    "condition": None,
                    "required": False,
                    "via": None,
                    "cli": f.cli,
                }
            return out[dest]

        for name in message_flags(site.template.literal_text):
            if name in self.by_flag:
                e = entry(self.by_flag[name])
                if name != e["flag"]:
                    e["mentioned_as"] = name  # the message spells it with an alias
                if "message" not in e["sides"]:
                    e["sides"].append("message")
        for seg in site.template.segments:
            if seg.kind != "placeholder":
                continue
            for dest in self._placeholder_dests(seg.text, site.path):
                e = entry(dest)
                if "message" not in e["sides"]:
                    e["sides"].append("message")
        for cond in site.conditions:
            for use in self._condition_uses(cond, site.path):
                e = entry(use.dest)
                if "condition" not in e["sides"]:
                    e["sides"].append("condition")
                # Keep the most telling use: a required boolean/value use beats "other".
                if e["polarity"] is None or _strength(use) > _strength_of(e):
                    e.update(
                        polarity=use.polarity,
                        value=use.value,
                        required=use.required,
                        condition=cond.text,
                        via=use.via,
                    )
        return sorted(out.values(), key=lambda e: (-len(e["sides"]), e["flag"]))


def error_flag_rows(
    error_id: str, snapshot_id: int, involvements: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Rows of the `error_flags` index (error, snapshot, dest) for one occurrence's links."""
    return [
        {"error_id": error_id, "snapshot_id": snapshot_id, "dest": e["dest"], "flag": e["flag"]}
        for e in involvements
    ]


def _strength(use: _Use) -> int:
    return (2 if use.required else 0) + (1 if use.polarity != "other" else 0)


def _strength_of(e: dict[str, Any]) -> int:
    return (2 if e["required"] else 0) + (1 if e["polarity"] not in (None, "other") else 0)
