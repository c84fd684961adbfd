"""Message templates: the exception's argument expression turned into literal text and placeholders.

A template is what a reader (and the log matcher) can rely on: the literal text the message is
sure to contain, with each part only known at run time kept as a placeholder holding its source
expression. We follow the ways messages are written in practice: literals and implicit
concatenation, `+`, f-strings, `str.format`, `%`, a local name bound earlier (also across
branches and `+=`), module constants and class constants read through `self`/`cls`.

Choices (documented here because they shape identities):
- A name bound differently on different paths reaching the raise becomes the text all the
  versions share at the start and at the end, with one placeholder named after the variable in
  between (`"bad " + x` / `"bad " + y + "!"` -> `bad {msg}`). Paths where the name is unbound are
  ignored: such a raise would fail with `UnboundLocalError` instead.
- `ValueError("text", x)` keeps the first argument's template and appends `, {x}` for each further
  argument: Python prints such an exception as a tuple, which contains the first argument's text.
"""

from __future__ import annotations

import ast

from errkb.core.records import Segment, Template
from errkb.ingest.extract.formats import fill, format_pieces, percent_args, percent_pieces
from errkb.ingest.extract.scope import Assigned, Augmented, Branches, Definition, Position, Scope

MAX_DEPTH = 200  # nested resolutions (names bound to names, branches) before giving up
MAX_REPEAT = 200  # longest text kept from `"-" * n`

Segs = list[Segment]


def _text(value: str) -> Segment:
    return Segment("text", value)


def _placeholder(expr: str, conversion: str | None = None, spec: str | None = None) -> Segment:
    return Segment("placeholder", expr, conversion, spec)


def compact(segments: Segs) -> tuple[Segment, ...]:
    """Adjacent text segments joined and empty ones dropped."""
    out: Segs = []
    for seg in segments:
        if seg.kind == "text":
            if not seg.text:
                continue
            if out and out[-1].kind == "text":
                out[-1] = _text(out[-1].text + seg.text)
                continue
        out.append(seg)
    return tuple(out)


def merged(options: list[Segs], name: str) -> Segs:
    """One template for several: their common start and end around a placeholder `{name}`."""
    first = compact(options[0])
    if all(compact(o) == first for o in options[1:]):
        return list(first)
    units = [[u for s in o for u in (s.text if s.kind == "text" else (s,))] for o in options]
    shortest = min(len(u) for u in units)
    prefix = 0
    while prefix < shortest and all(u[prefix] == units[0][prefix] for u in units):
        prefix += 1
    suffix = 0
    last = units[0]
    while suffix < shortest - prefix and all(u[-1 - suffix] == last[-1 - suffix] for u in units):
        suffix += 1
    head, tail = units[0][:prefix], units[0][len(units[0]) - suffix :]
    gap = _placeholder(name)
    # The differing middle may border a placeholder of the same name (merging an earlier merge):
    # one `{name}` stands for both, so repeated merges do not grow the template.
    if head and head[-1] == gap:
        head = head[:-1]
    if tail and tail[0] == gap:
        tail = tail[1:]
    out: Segs = [u if isinstance(u, Segment) else _text(u) for u in head]
    out.append(gap)
    out.extend(u if isinstance(u, Segment) else _text(u) for u in tail)
    return out


class TemplateBuilder:
    """Builds the templates of the raises in one scope (memoizing shared definitions)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._defs: dict[int, Segs] = {}
        self.name_form = "name"

    def template(self, exc: ast.expr, pos: Position) -> Template:
        """The template of the message given to the exception `exc` raised at `pos`."""
        args = exc.args if isinstance(exc, ast.Call) else []
        if not args:
            return Template(segments=(), form="none")
        first = args[0]
        if isinstance(first, ast.Starred):
            return Template((_placeholder(ast.unparse(first)),), "other")
        self.name_form = "name"
        segments = self.segments(first, self.scope, pos, 0)
        form = self._form(first)
        if form in ("percent", "format", "concat") and len(segments) == 1:
            if segments[0] == _placeholder(ast.unparse(first)):
                form = "other"  # e.g. `fmt % x` with an unknown `fmt`
        extras = [seg for a in args[1:] for seg in (_text(", "), _placeholder(ast.unparse(a)))]
        return Template(compact([*segments, *extras]), form)

    def _form(self, expr: ast.expr) -> str:
        if isinstance(expr, ast.Constant):
            return "literal"
        if isinstance(expr, ast.JoinedStr):
            has_field = any(isinstance(v, ast.FormattedValue) for v in expr.values)
            return "fstring" if has_field else "literal"
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mult)):
            return "concat"
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
            return "percent"
        if isinstance(expr, ast.Call) and _is_format_call(expr):
            return "format"
        if isinstance(expr, ast.Name):
            return self.name_form
        if isinstance(expr, ast.Attribute) and self.name_form == "constant":
            return "constant"
        return "other"

    def segments(self, expr: ast.expr, scope: Scope, pos: Position, depth: int) -> Segs:
        """Segments of one expression evaluated at `pos` in `scope`."""
        if depth > MAX_DEPTH:
            return [_placeholder(ast.unparse(expr))]
        if isinstance(expr, ast.Constant):
            value = expr.value
            return [_text(value if isinstance(value, str) else str(value))]
        if isinstance(expr, ast.JoinedStr):
            return self._fstring(expr, scope, pos, depth)
        if isinstance(expr, ast.BinOp):
            found = self._binop(expr, scope, pos, depth)
            if found is not None:
                return found
        elif isinstance(expr, ast.Call) and _is_format_call(expr):
            found = self._format_call(expr, scope, pos, depth)
            if found is not None:
                return found
        elif isinstance(expr, ast.Name):
            return self._name(expr.id, scope, pos, depth)
        elif isinstance(expr, ast.Attribute):
            found = self._class_constant(expr, scope, depth)
            if found is not None:
                return found
        elif isinstance(expr, ast.IfExp):
            options = [self.segments(e, scope, pos, depth + 1) for e in (expr.body, expr.orelse)]
            return merged(options, ast.unparse(expr))
        return [_placeholder(ast.unparse(expr))]

    def _fstring(self, expr: ast.JoinedStr, scope: Scope, pos: Position, depth: int) -> Segs:
        out: Segs = []
        for value in expr.values:
            if isinstance(value, ast.Constant):
                out.append(_text(str(value.value)))
            elif isinstance(value, ast.FormattedValue):
                conv = chr(value.conversion) if value.conversion > 0 else None
                spec = _spec_text(value.format_spec) if value.format_spec else None
                field = value.value
                if conv is None and spec is None and isinstance(field, (ast.Name, ast.Attribute)):
                    # `f"{PREFIX}: ..."`: a field naming known text is that text.
                    inner = self.segments(field, scope, pos, depth + 1)
                    if any(s.kind == "text" and s.text for s in inner):
                        out.extend(inner)
                        continue
                out.append(_placeholder(ast.unparse(field), conv, spec))
        return out

    def _binop(self, expr: ast.BinOp, scope: Scope, pos: Position, depth: int) -> Segs | None:
        if isinstance(expr.op, ast.Add):
            left = self.segments(expr.left, scope, pos, depth + 1)
            return left + self.segments(expr.right, scope, pos, depth + 1)
        if isinstance(expr.op, ast.Mult):
            text, count = expr.left, expr.right
            if isinstance(text, ast.Constant) and isinstance(count, ast.Constant):
                if isinstance(text.value, str) and type(count.value) is int:
                    return [_text((text.value * min(count.value, MAX_REPEAT))[:MAX_REPEAT])]
            return None
        if isinstance(expr.op, ast.Mod):
            fmt = self._literal(expr.left, scope, pos, depth + 1)
            pieces = percent_pieces(fmt) if fmt is not None else None
            if pieces is None:
                return None
            return fill(pieces, percent_args(expr.right))
        return None

    def _format_call(self, call: ast.Call, scope: Scope, pos: Position, depth: int) -> Segs | None:
        receiver = call.func.value  # type: ignore[attr-defined]
        fmt = self._literal(receiver, scope, pos, depth + 1)
        pieces = format_pieces(fmt) if fmt is not None else None
        if pieces is None:
            return None
        positional = [ast.unparse(a) for a in call.args]
        keywords = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
        return fill(pieces, (positional, keywords))

    def _literal(self, expr: ast.expr, scope: Scope, pos: Position, depth: int) -> str | None:
        """The text of an expression that resolves to literal text only, else None."""
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, str) else None
        segs = self.segments(expr, scope, pos, depth)
        if all(s.kind == "text" for s in segs):
            return "".join(s.text for s in segs)
        return None

    def _name(self, name: str, scope: Scope, pos: Position, depth: int) -> Segs:
        current: Scope | None = scope
        while current is not None:
            if name in current.local_names:
                if depth == 0:  # the form is about the argument itself, not what it uses
                    module_or_class = current is not scope and not current.is_function
                    self.name_form = "constant" if module_or_class else "name"
                definition = current.lookup(name, pos)
                return self._definition(definition, name, current, depth)
            parent = current.parent
            if current.is_function:
                # A function runs after its enclosing scopes are complete and skips class bodies.
                while parent is not None and isinstance(parent.node, ast.ClassDef):
                    parent = parent.parent
                pos = parent.end() if parent is not None else ()
            else:
                pos = current.parent_pos  # a class body runs where it is defined
            current = parent
        return [_placeholder(name)]

    def _definition(self, d: Definition | None, name: str, scope: Scope, depth: int) -> Segs:
        if d is None or depth > MAX_DEPTH:
            return [_placeholder(name)]
        cached = self._defs.get(id(d))
        if cached is not None:
            return cached
        if isinstance(d, Assigned):
            out = self.segments(d.value, scope, d.pos, depth + 1)
        elif isinstance(d, Augmented):
            before = self._definition(d.prev, name, scope, depth + 1)
            out = before + self.segments(d.value, scope, d.pos, depth + 1)
        elif isinstance(d, Branches):
            options = [self._definition(o, name, scope, depth + 1) for o in d.options]
            out = merged(options, name)
        else:
            out = [_placeholder(name)]
        self._defs[id(d)] = out
        return out

    def _class_constant(self, expr: ast.Attribute, scope: Scope, depth: int) -> Segs | None:
        owner = scope.owner_class
        base = expr.value
        if owner is None or not isinstance(base, ast.Name):
            return None
        if base.id not in ("self", "cls", getattr(owner.node, "name", None)):
            return None
        if expr.attr not in owner.local_names:
            return None
        definition = owner.lookup(expr.attr, owner.end())
        if not isinstance(definition, Assigned):
            return None
        if depth == 0:
            self.name_form = "constant"
        return self.segments(definition.value, owner, definition.pos, depth + 1)


def _is_format_call(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "format"


def _spec_text(spec: ast.expr) -> str:
    """An f-string format spec as text, nested fields shown as `{expr}`."""
    if isinstance(spec, ast.JoinedStr):
        parts = []
        for v in spec.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value) + "}")
        return "".join(parts)
    return ast.unparse(spec)
