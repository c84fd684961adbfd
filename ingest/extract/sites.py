"""One pass over a module's statements that finds every site of a configured kind: raises of the
configured exception classes (or of every class), asserts, and subscripts of configured mappings
that raise KeyError for a missing key.

Sites are statements, so the walk visits statement lists only (never expressions), and only the
statements whose line span mentions a marker word (`ExtractConfig.markers`: a `raise X(...)`
always spells X, or `raise`, inside its own span), so most of a large file is never visited. It
keeps a path of `PathStep`s from the enclosing scope's body down to the current block; when a
site is found, that path gives its guard chain, the positions for name lookups, and its
qualified name, so nothing needs a second walk of the tree.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Mapping
from typing import NamedTuple

from errkb.core.records import ExtractConfig, Segment, Site, SiteKind, Template
from errkb.ingest.extract.attributes import ClassAttributes, class_attributes
from errkb.ingest.extract.callers import call_texts, code_calls, passed, string_spans
from errkb.ingest.extract.conditions import (
    NO_PARAMS,
    BlockEntry,
    GuardChains,
    Passed,
    PathStep,
    position,
)
from errkb.ingest.extract.raised import raised, raised_name
from errkb.ingest.extract.reasons import site_notes
from errkb.ingest.extract.scope import Scope
from errkb.ingest.extract.snippet import snippet_for
from errkb.ingest.extract.source import SourceLines
from errkb.ingest.extract.templates import TemplateBuilder

__all__ = ["SiteFinder", "lines_mentioning", "raised_name"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NO_MESSAGE = Template((), "none")


def _branches(stmt: ast.stmt) -> list[tuple[list[ast.stmt], BlockEntry]]:
    """The blocks nested in a compound statement, each with how it is entered."""
    if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [(stmt.body, BlockEntry(stmt, "body")), (stmt.orelse, BlockEntry(stmt, "orelse"))]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [(stmt.body, BlockEntry(stmt, "body"))]
    if isinstance(stmt, ast.Match):
        return [(case.body, BlockEntry(stmt, "case", case)) for case in stmt.cases]
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        t: ast.Try = stmt  # type: ignore[assignment]
        return [
            (t.body, BlockEntry(stmt, "body")),
            *((h.body, BlockEntry(stmt, "handler", h)) for h in t.handlers),
            (t.orelse, BlockEntry(stmt, "orelse")),
            (t.finalbody, BlockEntry(stmt, "finalbody")),
        ]
    return []


def lines_mentioning(text: str, names: tuple[str, ...]) -> list[int]:
    """Sorted line numbers (1-based) of the lines where any of `names` occurs."""
    found: set[int] = set()
    for name in names:
        line, last, pos = 1, 0, text.find(name)
        while pos >= 0:
            line += text.count("\n", last, pos)
            last = pos
            found.add(line)
            pos = text.find(name, pos + len(name))
    return sorted(found)


class _InScope(NamedTuple):
    """A scope with the per-scope helpers that memoize work shared by its raises."""

    scope: Scope
    templates: TemplateBuilder
    guards: GuardChains

    @classmethod
    def of(
        cls, scope: Scope, attributes: Mapping[str, tuple[str, ...]], params: Passed = NO_PARAMS
    ) -> _InScope:
        return cls(scope, TemplateBuilder(scope), GuardChains(scope, attributes, params))


class SiteFinder:
    """Collects the `Site`s of one module."""

    def __init__(
        self,
        lines: SourceLines,
        path: str,
        config: ExtractConfig,
        parsed_text: str | None = None,
    ) -> None:
        """`parsed_text` is the text the tree came from when it is not `lines` (a masked module,
        see `ingest.extract.units`); snippets always come from `lines`, the real file."""
        self.lines = lines
        self.path = path
        self.every = config.every_class
        self.exceptions = frozenset(config.exceptions)
        self.asserts = config.asserts
        self.lookups = frozenset(config.lookups)
        self.sites: list[Site] = []
        self.hits = lines_mentioning(parsed_text or lines.text, config.markers)
        self.attributes: ClassAttributes | None = None
        # the spans of the file's strings and comments, read when a parameter's callers are
        self.strings: list[tuple[int, int]] | None = None

    def _may_hold_site(self, stmt: ast.stmt) -> bool:
        """True when the statement's lines mention a marker word (else skip its subtree)."""
        i = bisect_left(self.hits, stmt.lineno)
        return i < len(self.hits) and self.hits[i] <= (stmt.end_lineno or stmt.lineno)

    def run(self, tree: ast.Module) -> list[Site]:
        """Every matching site of the module, in source order."""
        module = Scope(tree, tree.body)
        self._block(tree.body, (), None, _InScope.of(module, {}), ())
        return self.sites

    def _block(
        self,
        block: list[ast.stmt],
        outer: tuple[PathStep, ...],
        entry: BlockEntry | None,
        here: _InScope,
        names: tuple[str, ...],
    ) -> None:
        for index, stmt in enumerate(block):
            if not self._may_hold_site(stmt):
                continue
            step = (*outer, PathStep(block, index, entry))
            if isinstance(stmt, ast.Raise):
                if stmt.exc is not None:
                    self._raise(stmt, stmt.exc, step, here, names)
                continue
            if isinstance(stmt, ast.Assert):
                if self.asserts:
                    self._assert(stmt, step, here, names)
                continue
            if isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
                self._scope(stmt, step, here.scope, names)
                continue
            branches = _branches(stmt)
            if branches:
                for child, child_entry in branches:
                    self._block(child, step, child_entry, here, names)
            elif self.lookups:
                self._lookups(stmt, step, here, names)

    def _scope(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
        frames: tuple[PathStep, ...],
        parent: Scope,
        names: tuple[str, ...],
    ) -> None:
        owner = parent if isinstance(parent.node, ast.ClassDef) else None
        if owner is None and isinstance(node, _FUNCTIONS):
            owner = parent.owner_class if _is_nested_in_method(parent) else None
        scope = Scope(node, node.body, parent, position(frames), owner)
        here = _InScope.of(scope, self._attributes_of(owner), self._passed(node, scope))
        self._block(node.body, (), None, here, (*names, node.name))

    def _passed(self, node: ast.AST, scope: Scope) -> Passed:
        """What the module's callers pass to a module-level function or a top-level class's
        method (the functions `ingest.extract.units` caches one by one)."""
        if not isinstance(node, _FUNCTIONS) or scope.parent is None:
            return NO_PARAMS
        owner = scope.parent
        if owner.parent is None:
            cls = ""
        elif isinstance(owner.node, ast.ClassDef) and owner.parent.parent is None:
            cls = owner.node.name
        else:
            return NO_PARAMS
        args = node.args
        names = frozenset(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
        text = self.lines.text

        def find() -> dict[str, str]:
            if not call_texts(text, node.name, cls):
                return {}
            if self.strings is None:
                self.strings = string_spans(text)
            return passed(code_calls(text, node.name, cls, self.strings), node, bool(cls))

        return Passed(names - {"self", "cls"}, find)

    def _attributes_of(self, owner: Scope | None) -> Mapping[str, tuple[str, ...]]:
        """What a top-level class assigns to its `self.name`s (read once per file)."""
        if owner is None or owner.parent is None or owner.parent.parent is not None:
            return {}
        if self.attributes is None:
            self.attributes = class_attributes(self.lines.text)
        return self.attributes.get(getattr(owner.node, "name", ""), {})

    def _raise(
        self,
        stmt: ast.Raise,
        exc: ast.expr,
        frames: tuple[PathStep, ...],
        here: _InScope,
        names: tuple[str, ...],
    ) -> None:
        if not self.every:
            name = raised_name(exc)
            if name in self.exceptions:
                self._site(stmt, exc, _Found("raise", name or ""), frames, here, names)
            return
        found = raised(exc, _caught(frames))
        if found is not None:
            self._site(stmt, exc, _Found(found.kind, found.name), frames, here, names)

    def _assert(
        self, stmt: ast.Assert, frames: tuple[PathStep, ...], here: _InScope, names: tuple[str, ...]
    ) -> None:
        # The message is built as `AssertionError(msg)` would be: the same template rules apply.
        call = ast.Call(ast.Name("AssertionError"), [stmt.msg] if stmt.msg else [], [])
        found = _Found("assert", "AssertionError", ast.unparse(stmt.test))
        self._site(stmt, call, found, frames, here, names)

    def _lookups(
        self, stmt: ast.stmt, frames: tuple[PathStep, ...], here: _InScope, names: tuple[str, ...]
    ) -> None:
        seen: set[str] = set()
        for node in ast.walk(stmt):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id in self.lookups
            ):
                check = ast.unparse(node)
                if check not in seen:
                    seen.add(check)
                    # KeyError prints the missing key's repr.
                    key = Segment("placeholder", ast.unparse(node.slice), "r")
                    found = _Found("lookup", "KeyError", check, Template((key,), "other"))
                    self._site(stmt, None, found, frames, here, names)

    def _site(
        self,
        stmt: ast.stmt,
        exc: ast.expr | None,
        found: _Found,
        frames: tuple[PathStep, ...],
        here: _InScope,
        names: tuple[str, ...],
    ) -> None:
        try:
            conditions, outermost = here.guards.chain(frames)
        except RecursionError:  # a pathologically deep test loses the chain, not the file
            conditions, outermost = (), None
        start, end = stmt.lineno, stmt.end_lineno or stmt.lineno
        args = exc.args if isinstance(exc, ast.Call) else []
        template = found.template
        if template is None and exc is not None:
            try:
                template = here.templates.template(exc, position(frames))
            except RecursionError:  # a pathologically deep message loses its resolution only
                template = Template((Segment("placeholder", self.lines.segment(args[0])),), "other")
        template = template or _NO_MESSAGE
        check = found.check
        if not check and not template.segments and conditions:
            check = conditions[-1].text  # a message-less raise is told apart by its guard
        self.sites.append(
            Site(
                exception=found.name,
                template=template,
                path=self.path,
                line=start,
                end_line=end,
                qualname=".".join(names) or "<module>",
                conditions=conditions,
                snippet=snippet_for(self.lines, start, end, outermost),
                raise_source=self.lines.segment(args[0], args[-1]) if args else "",
                notes=site_notes(self.lines, here.scope, start, conditions, template),
                kind=found.kind,
                check=check,
            )
        )


class _Found(NamedTuple):
    """What a site raises, and what is known of it before its message is built."""

    kind: SiteKind
    name: str
    check: str = ""
    template: Template | None = None


def _caught(frames: tuple[PathStep, ...]) -> frozenset[str]:
    """The names `except ... as name` handlers around the statement bind."""
    return frozenset(
        f.entry.item.name
        for f in frames
        if f.entry is not None
        and f.entry.branch == "handler"
        and isinstance(f.entry.item, ast.ExceptHandler)
        and f.entry.item.name
    )


def _is_nested_in_method(scope: Scope) -> bool:
    """True for a function scope inside a method (closures see the method's `self`)."""
    return scope.is_function and scope.owner_class is not None
