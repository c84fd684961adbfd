"""The statements tracebacks print for sites that no message identifies.

Python prints the failing line under a traceback's innermost frame: `assert x > 0`, `param =
params_dict[name]`, `raise NotImplementedError()`. For an assert, a missing-key lookup or a raise
without a message, that line (with the frame's file and function) is what tells the site, even at
a line number no ingested snapshot has. Compared squeezed and without quotes, because
`ast.unparse` (which wrote the stored check) and the author may quote differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from errkb.service.match.matcher.normalize import squeeze

if TYPE_CHECKING:
    from errkb.service.match.matcher.index import CompiledTemplate, ErrorRow


# (function, file name) -> (statement, entry index) of the sites there that print a statement;
# asserts also under (function, ""), for a file that was renamed or split since.
Statements = Mapping[tuple[str, str], tuple[tuple[str, int], ...]]


def unquoted(squeezed: str) -> str:
    """Squeezed code without quote characters (`ast.unparse` and authors quote differently)."""
    return squeezed.replace("'", "").replace('"', "")


def statement_key(row: ErrorRow) -> str:
    """What a traceback prints of the site's statement (`statement`), for sites that no
    message identifies: asserts, lookups, raises without a message."""
    if row.kind == "assert" and row.check:
        return unquoted("assert" + squeeze(row.check))
    if row.kind == "lookup" and row.check:
        return unquoted(squeeze(row.check))
    if row.kind == "raise" and not row.template:
        return "raise" + row.exception
    return ""


def statement_sites(
    entries: list[CompiledTemplate],
) -> dict[tuple[str, str], tuple[tuple[str, int], ...]]:
    """(function, file name) -> the distinct (statement, entry) there, for `statements` (keyed
    by both: a name like `forward` has thousands of asserts, over hundreds of files)."""
    found: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for e, entry in enumerate(entries):
        if entry.statement:
            for site in entry.sites:
                name = site.module_path.rsplit("/", 1)[-1]
                found.setdefault((site.function, name), set()).add((entry.statement, e))
                if entry.statement.startswith("assert"):  # also under the function alone
                    found.setdefault((site.function, ""), set()).add((entry.statement, e))
    return {key: tuple(sorted(v)) for key, v in found.items()}
