"""Flags declared by argparse calls: `parser.add_argument("--flag", ...)` anywhere in a file (pure).

Each call with option names given as literals becomes a `FlagDef` with argparse's own defaults
(`dest`, `store_true` as a bool, `nargs="+"` as a list); a `default=Cls.attr` naming a class of
the same file is resolved to the attribute's value.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from errkb.core.records import FlagDef
from errkb.ingest.extract.field_flags import field_default
from errkb.ingest.extract.flag_text import NodeSource, choices_of, keywords_of, text_of

_BOOL_ACTIONS = {"store_true": "False", "store_false": "True"}


def dest_of(flags: Iterable[str]) -> str:
    """argparse's default dest: the first long flag, else the first short one, `-` -> `_`."""
    names = list(flags)
    long = [f for f in names if f.startswith("--")]
    return (long or names)[0].lstrip("-").replace("-", "_")


def class_defaults(tree: ast.Module, src: NodeSource) -> dict[str, dict[str, str]]:
    """class name -> {attribute: default source} for classes of this file (`Cls.attr` defaults)."""
    out: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            attrs: dict[str, str] = {}
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.value is not None:
                        attrs[stmt.target.id] = field_default(stmt.value, src) or ""
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    if isinstance(stmt.targets[0], ast.Name):
                        attrs[stmt.targets[0].id] = src.of(stmt.value)
            out.setdefault(node.name, attrs)
    return out


def argparse_flag(
    call: ast.Call, path: str, src: NodeSource, defaults: dict[str, dict[str, str]]
) -> FlagDef | None:
    """The flag an `add_argument` call defines; None for a positional argument."""
    names = tuple(t for a in call.args if (t := text_of(a)) is not None and t.startswith("-"))
    if not names:
        return None  # positional argument or names built at runtime
    kw = keywords_of(call)
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
        choices=choices_of(kw.get("choices"), src),
        help=text_of(kw.get("help")) or (src.of(kw["help"]) if "help" in kw else None),
        path=path,
        line=call.lineno,
        origin="argparse",
    )


def _arg_default(
    node: ast.expr | None, src: NodeSource, defaults: dict[str, dict[str, str]]
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
