"""Flags declared as the fields of settings classes (`flag_classes` in the config; pure).

Each field becomes a `--field-name` option, written `name: type = default` or
`name: Annotated[type, "help", Arg(help=..., choices=...)]` under any alias of `Annotated`;
the metadata may rename the option (`cli_name`), add aliases or keep it off the command line
(`no_cli`). A string right after a field documents it when the metadata gives no help, and a
`Literal[...]` type gives the choices.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from errkb.core.records import FlagDef
from errkb.ingest.extract.flag_text import (
    NodeSource,
    choices_of,
    keywords_of,
    strings_of,
    text_of,
)

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


def class_flags(node: ast.ClassDef, path: str, src: NodeSource) -> list[FlagDef]:
    """The flags a flag class declares, one per field, in the order of its body."""
    docs = _attribute_docs(node.body)
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and (f := _dataclass_flag(stmt, path, src)):
            if f.help is None and id(stmt) in docs:
                f = replace(f, help=docs[id(stmt)])
            out.append(f)
    return out


def field_default(value: ast.expr | None, src: NodeSource) -> str | None:
    """A dataclass field's default source; `field(default=x)` -> x, `default_factory=f` -> f()."""
    if value is None:
        return None
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
        kw = keywords_of(value)
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


def _dataclass_flag(stmt: ast.AnnAssign, path: str, src: NodeSource) -> FlagDef | None:
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
                kw = keywords_of(m)
                if "help" in kw or (m.args and text_of(m.args[0]) is not None):
                    help_ = help_ or text_of(kw.get("help") or m.args[0])
                choices = choices_of(kw.get("choices"), src) or choices
                if (cli_name := text_of(kw.get("cli_name"))) is not None:
                    flags = (cli_name,)
                flags += strings_of(kw.get("aliases")) or ()
                no_cli = kw.get("no_cli")
                cli = cli and not (isinstance(no_cli, ast.Constant) and no_cli.value is True)
    type_ = src.of(type_node)
    default = field_default(stmt.value, src)
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
