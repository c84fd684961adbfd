"""The flag catalog: command-line options from argparse calls and settings dataclasses (pure).

Errors are usually caused by a combination of options, so every entry names the options it
involves. Projects declare them in two ways, and both are read statically from the syntax tree:
`parser.add_argument("--flag", ...)` calls anywhere in the tree (`ingest.extract.argparse_flags`),
and the fields of settings classes named in the config (`flag_classes`, read by
`ingest.extract.flag_classes`), whose fields become `--field-name` options
(`ingest.extract.field_flags`). This module walks one parsed file for both.
`ingest.extract` calls `flags_from_tree` on each parsed file; `errkb.core.flag_catalog` merges
the results of a snapshot.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections import deque
from collections.abc import Iterator
from fnmatch import fnmatchcase

from errkb.core.records import FlagDef
from errkb.ingest.extract.argparse_flags import argparse_flag, class_defaults
from errkb.ingest.extract.field_flags import class_flags
from errkb.ingest.extract.flag_classes import flag_class_globs
from errkb.ingest.extract.flag_text import NodeSource


def flags_from_tree(
    tree: ast.Module, source: str, path: str, flag_classes: tuple[str, ...]
) -> tuple[FlagDef, ...]:
    """Every flag defined in one parsed file (argparse `add_argument` calls, flag-class fields)."""
    src = NodeSource(source)
    globs = flag_class_globs(flag_classes, path)
    out: list[FlagDef] = []
    defaults: dict[str, dict[str, str]] | None = None
    for node in _walk_pruned(tree, _marker_lines(source, "add_argument")):
        if isinstance(node, ast.ClassDef) and any(fnmatchcase(node.name, c) for c in globs):
            out.extend(class_flags(node, path, src))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            if defaults is None:
                defaults = class_defaults(tree, src)
            if (f := argparse_flag(node, path, src, defaults)) is not None:
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
