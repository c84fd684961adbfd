"""The flag catalog: command-line options from argparse calls and settings dataclasses (pure).

Errors are usually caused by a combination of options, so every entry names the options it
involves. Projects declare them in two ways, and both are read statically from the syntax tree:
`parser.add_argument("--flag", ...)` calls anywhere in the tree, and the fields of settings
classes named in the config (`flag_classes`), whose fields become `--field-name` options,
written `name: type = default` or `name: Annotated[type, "help", Arg(help=..., choices=...)]`.
A `flag_classes` entry is a class name (`ServerArgs`) or `path-glob:class-glob` for settings
split over many classes (`*/arg_groups/fields/*.py:*`: every class of those files).
`ingest.extract` calls `flags_from_tree` on each parsed file; `errkb.core.flag_catalog` merges
the results of a snapshot.
"""

from __future__ import annotations

import ast
import hashlib
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import replace
from fnmatch import fnmatchcase

from errkb.core.records import FlagDef

# Subscripted generics whose tuple slice is a type list, never Annotated metadata.
_GENERICS = frozenset(
    {
        "Literal",
        "Dict",
        "dict",
        "Tuple",
        "tuple",
        "Union",
        "Callable",
        "Mapping",
        "Optional",
        "List",
        "list",
        "Set",
        "set",
        "FrozenSet",
        "frozenset",
        "Type",
        "type",
        "ClassVar",
    }
)
_BOOL_ACTIONS = {"store_true": "False", "store_false": "True"}


class _Source:
    """Source text of nodes, with line offsets computed once (get_source_segment re-splits)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines(keepends=True)

    def of(self, node: ast.AST) -> str:
        """The exact source of a node, or its unparsed form when positions are missing."""
        lineno, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if None in (lineno, end, col, end_col) or end > len(self.lines):  # type: ignore[operator]
            return ast.unparse(node)
        first, last = lineno - 1, end - 1  # type: ignore[operator]
        if first == last:
            text = self.lines[first].encode()[col:end_col].decode(errors="replace")
        else:
            parts = [self.lines[first].encode()[col:].decode(errors="replace")]
            parts += self.lines[first + 1 : last]
            parts.append(self.lines[last].encode()[:end_col].decode(errors="replace"))
            text = "".join(parts)
        return text if "\n" not in text else ast.unparse(node)


def text_of(node: ast.AST | None) -> str | None:
    """A string expression as text: literals, implicit/`+` concatenation, f-strings as `{expr}`."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                out.append("{" + ast.unparse(part.value) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = text_of(node.left), text_of(node.right)
        return None if left is None or right is None else left + right
    return None


def _strings(node: ast.AST | None) -> tuple[str, ...] | None:
    """A list/tuple/set of string literals, or None when it is anything else."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [text_of(e) for e in node.elts]
        if all(i is not None for i in items):
            return tuple(i for i in items if i is not None)
    return None


def _choices(node: ast.AST | None, src: _Source) -> tuple[str, ...] | None:
    """Choices as displayed: literal items, else the expression's source as a single item."""
    if node is None:
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return tuple((t if (t := text_of(e)) is not None else src.of(e)) for e in node.elts)
    return (src.of(node),)


def dest_of(flags: Iterable[str]) -> str:
    """argparse's default dest: the first long flag, else the first short one, `-` -> `_`."""
    names = list(flags)
    long = [f for f in names if f.startswith("--")]
    return (long or names)[0].lstrip("-").replace("-", "_")


def _kwargs(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def _class_defaults(tree: ast.Module, src: _Source) -> dict[str, dict[str, str]]:
    """class name -> {attribute: default source} for classes of this file (`Cls.attr` defaults)."""
    out: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            attrs: dict[str, str] = {}
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.value is not None:
                        attrs[stmt.target.id] = _field_default(stmt.value, src) or ""
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    if isinstance(stmt.targets[0], ast.Name):
                        attrs[stmt.targets[0].id] = src.of(stmt.value)
            out.setdefault(node.name, attrs)
    return out


def _argparse_flag(
    call: ast.Call, path: str, src: _Source, defaults: dict[str, dict[str, str]]
) -> FlagDef | None:
    names = tuple(t for a in call.args if (t := text_of(a)) is not None and t.startswith("-"))
    if not names:
        return None  # positional argument or names built at runtime
    kw = _kwargs(call)
    dest = text_of(kw.get("dest")) or dest_of(names)
    action = text_of(kw.get("action"))
    type_ = src.of(kw["type"]) if "type" in kw else None
    default = _arg_default(kw.get("default"), src, defaults)
    if action in _BOOL_ACTIONS:
        type_ = "bool"
        default = default if default is not None else _BOOL_ACTIONS[action]
    nargs = text_of(kw.get("nargs"))
    if nargs in ("+", "*"):
        type_ = f"list[{type_ or 'str'}]"
    return FlagDef(
        flags=names,
        dest=dest,
        type=type_,
        default=default,
        choices=_choices(kw.get("choices"), src),
        help=text_of(kw.get("help")) or (src.of(kw["help"]) if "help" in kw else None),
        path=path,
        line=call.lineno,
        origin="argparse",
    )


def _arg_default(
    node: ast.expr | None, src: _Source, defaults: dict[str, dict[str, str]]
) -> str | None:
    """The default's source; `Cls.attr` of a class in the same file resolves to its value."""
    if node is None:
        return None
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.attr in defaults.get(node.value.id, {})
    ):
        return defaults[node.value.id][node.attr] or None
    return src.of(node)


def _field_default(value: ast.expr | None, src: _Source) -> str | None:
    """A dataclass field's default source; `field(default=x)` -> x, `default_factory=f` -> f()."""
    if value is None:
        return None
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
        kw = _kwargs(value)
        if "default" in kw:
            return src.of(kw["default"])
        if "default_factory" in kw:
            return src.of(kw["default_factory"]) + "()"
        return None
    return src.of(value)


def _annotated_parts(ann: ast.expr) -> tuple[ast.expr, list[ast.expr]] | None:
    """(type, metadata) of `Annotated[T, ...]` under any alias, e.g. `A[T, "help"]`."""
    if not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple)):
        return None
    name = ast.unparse(ann.value).split(".")[-1]
    elts = ann.slice.elts
    if name in _GENERICS or len(elts) < 2:
        return None
    meta = elts[1:]
    is_meta = any(text_of(m) is not None or isinstance(m, ast.Call) for m in meta)
    return (elts[0], meta) if name == "Annotated" or is_meta else None


def _dataclass_flag(stmt: ast.AnnAssign, path: str, src: _Source) -> FlagDef | None:
    if not isinstance(stmt.target, ast.Name):
        return None
    name = stmt.target.id
    ann = stmt.annotation
    if ast.unparse(ann).startswith(("ClassVar", "typing.ClassVar", "InitVar")):
        return None
    flags: tuple[str, ...] = ("--" + name.replace("_", "-"),)
    type_node: ast.expr = ann
    help_: str | None = None
    choices: tuple[str, ...] | None = None
    cli = True
    parts = _annotated_parts(ann)
    if parts is not None:
        type_node, meta = parts
        for m in meta:
            if (t := text_of(m)) is not None:
                help_ = help_ or t
            elif isinstance(m, ast.Call):
                kw = _kwargs(m)
                if "help" in kw or (m.args and text_of(m.args[0]) is not None):
                    help_ = help_ or text_of(kw.get("help") or m.args[0])
                choices = _choices(kw.get("choices"), src) or choices
                if (cli_name := text_of(kw.get("cli_name"))) is not None:
                    flags = (cli_name,)
                flags += _strings(kw.get("aliases")) or ()
                no_cli = kw.get("no_cli")
                cli = cli and not (isinstance(no_cli, ast.Constant) and no_cli.value is True)
    type_ = src.of(type_node)
    default = _field_default(stmt.value, src)
    choices = choices or _literal_choices(type_node)
    return FlagDef(
        flags=flags,
        dest=name,
        type=type_,
        default=default,
        choices=choices,
        help=help_,
        path=path,
        line=stmt.lineno,
        origin="dataclass",
        cli=cli,
    )


def _literal_choices(type_node: ast.expr) -> tuple[str, ...] | None:
    """Choices of a `Literal[...]` type, also inside `Optional[...]`."""
    for node in ast.walk(type_node):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            values = [e.value for e in elts if isinstance(e, ast.Constant)]
            if values and len(values) == len(elts):
                return tuple(str(v) for v in values)
    return None


def _attribute_docs(body: list[ast.stmt]) -> dict[int, str]:
    """Attribute docstrings: a string statement right after a field documents it."""
    docs: dict[int, str] = {}
    for stmt, nxt in zip(body, body[1:], strict=False):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(nxt, ast.Expr)
            and (t := text_of(nxt.value)) is not None
        ):
            docs[id(stmt)] = " ".join(t.split())
    return docs


def _split_spec(spec: str) -> tuple[str | None, str]:
    """`"ServerArgs"` -> (None, "ServerArgs"); `"*/fields/*.py:*"` -> ("*/fields/*.py", "*")."""
    path, sep, cls = spec.rpartition(":")
    return (path, cls) if sep else (None, spec)


def flag_class_globs(flag_classes: tuple[str, ...], path: str) -> tuple[str, ...]:
    """The class-name globs of the flag classes a file at `path` can define."""
    specs = (_split_spec(spec) for spec in flag_classes)
    return tuple(cls for glob, cls in specs if glob is None or fnmatchcase(path, glob))


def path_variant(flag_classes: tuple[str, ...], path: str) -> str:
    """A short digest of the path-glob entries matching `path` ("" when none does)."""
    matched = [spec for spec in flag_classes if _matches_path(spec, path)]
    return hashlib.sha256("\n".join(matched).encode()).hexdigest()[:8] if matched else ""


def _matches_path(spec: str, path: str) -> bool:
    glob, _ = _split_spec(spec)
    return glob is not None and fnmatchcase(path, glob)


def class_markers(flag_classes: tuple[str, ...], path: str | None = None) -> tuple[bytes, ...]:
    """Bytes a file must contain to define one of the flag classes (for the prefilter).

    With `path`, entries whose path glob does not match it are left out: the file cannot define
    those classes, and a class glob's marker (`class `) would let almost every file through.
    """
    out = []
    for spec in flag_classes:
        glob, cls = _split_spec(spec)
        if path is not None and glob is not None and not fnmatchcase(path, glob):
            continue
        out.append(b"class " if any(ch in cls for ch in "*?[") else cls.encode())
    return tuple(out)


def flags_from_tree(
    tree: ast.Module, source: str, path: str, flag_classes: tuple[str, ...]
) -> tuple[FlagDef, ...]:
    """Every flag defined in one parsed file (argparse `add_argument` calls, flag-class fields)."""
    src = _Source(source)
    wanted = [_split_spec(spec) for spec in flag_classes]
    wanted = [(p, c) for p, c in wanted if p is None or fnmatchcase(path, p)]
    out: list[FlagDef] = []
    defaults: dict[str, dict[str, str]] | None = None
    for node in _walk_pruned(tree, _marker_lines(source, "add_argument")):
        if isinstance(node, ast.ClassDef) and any(fnmatchcase(node.name, c) for _, c in wanted):
            docs = _attribute_docs(node.body)
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and (f := _dataclass_flag(stmt, path, src)):
                    if f.help is None and id(stmt) in docs:
                        f = replace(f, help=docs[id(stmt)])
                    out.append(f)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            if defaults is None:
                defaults = _class_defaults(tree, src)
            if (f := _argparse_flag(node, path, src, defaults)) is not None:
                out.append(f)
    out.sort(key=lambda f: (f.line, f.origin))
    return tuple(out)


def _marker_lines(source: str, marker: str) -> list[int]:
    """Sorted 1-based numbers of the lines containing `marker`."""
    return [i for i, line in enumerate(source.split("\n"), 1) if marker in line]


def _walk_pruned(tree: ast.AST, lines: list[int]) -> Iterator[ast.AST]:
    """`ast.walk`, minus the insides of expressions spanning none of `lines`.

    An `x.add_argument(...)` call spans a line containing `add_argument`, and expressions never
    contain class definitions, so the skipped nodes cannot matter; walking every expression of
    a large module costs about as much as parsing it. The order is `ast.walk`'s, less the
    skipped nodes.
    """
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.expr):
            i = bisect_left(lines, node.lineno)
            if i == len(lines) or lines[i] > (node.end_lineno or node.lineno):
                yield node
                continue
        todo.extend(ast.iter_child_nodes(node))
        yield node
