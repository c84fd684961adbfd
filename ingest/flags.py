"""The flag catalog: command-line options from argparse calls and settings dataclasses (pure).

Owned by the knowledge work (issue 3); `ingest.extract` calls `flags_from_tree` on each parsed file.
"""

from __future__ import annotations

import ast

from ingest.records import FlagDef


def flags_from_tree(
    tree: ast.Module, source: str, path: str, flag_classes: tuple[str, ...]
) -> tuple[FlagDef, ...]:
    """Every flag defined in one parsed file (argparse `add_argument` calls, flag-class fields)."""
    return ()  # in progress: implemented by the knowledge work
