"""Pure extraction: one file's bytes -> its raise sites and flag definitions (`FileResult`).

No database, git or network here, and the scanned code is never imported or run: the file is
only parsed with `ast`. Any file, however broken or hostile, yields a `FileResult` whose status
says what happened; `extract_file` does not raise for bad input.
"""

from __future__ import annotations

import ast
import warnings

from errkb.core.records import ExtractConfig, FileResult, FlagDef, Site
from errkb.ingest.extract import flag_defs as flags
from errkb.ingest.extract.classes import class_defs
from errkb.ingest.extract.decode import decoded, may_define_flags, may_import, may_raise, rejected
from errkb.ingest.extract.imports import import_sites
from errkb.ingest.extract.sites import SiteFinder
from errkb.ingest.extract.source import SourceLines

# Part of the file-cache key: bump whenever the records produced for the same input change.
EXTRACTOR_VERSION = "7"  # 7: a unit's cache key covers constants its callers pass
# (Import sites need no bump: they are read only under a config with `own_packages`, whose digest
# differs from every config before them.)

__all__ = ["EXTRACTOR_VERSION", "extract_file"]


def extract_file(data: bytes, path: str, config: ExtractConfig) -> FileResult:
    """Everything one file contributes: its raise sites and flags, or why it was skipped."""
    early = rejected(data, path, config)
    if early is not None:
        return early
    text = decoded(data)
    if isinstance(text, FileResult):
        return text
    try:
        with warnings.catch_warnings():
            # Scanned code's own SyntaxWarnings (e.g. invalid escapes) are not ours to report,
            # and under an "error" warnings filter they would wrongly fail the parse.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as exc:  # includes IndentationError and "too many nested parentheses"
        detail = f"line {exc.lineno}: {exc.msg}"
        return FileResult(status="syntax_error", detail=detail, parsed=True)
    except (RecursionError, MemoryError) as exc:
        return FileResult(status="too_deep", detail=f"parse: {type(exc).__name__}", parsed=True)
    except ValueError as exc:  # e.g. source the compiler rejects outright
        return FileResult(status="syntax_error", detail=str(exc), parsed=True)
    sites: tuple[Site, ...] = ()
    if may_raise(data, config.markers):
        try:
            sites = tuple(SiteFinder(SourceLines(text), path, config).run(tree))
        except (RecursionError, MemoryError) as exc:
            return FileResult(status="too_deep", detail=f"walk: {type(exc).__name__}", parsed=True)
    if may_import(data, config):
        found = import_sites(tree, SourceLines(text), path, config.own_packages)
        sites = tuple(sorted(sites + tuple(found), key=lambda s: s.line))
    found_flags, detail = flags_of(data, tree, text, path, config)
    classes = class_defs(tree.body) if config.every_class else ()
    return FileResult(
        status="ok", sites=sites, flags=found_flags, detail=detail, parsed=True, classes=classes
    )


def flags_of(
    data: bytes, tree: ast.Module, text: str, path: str, config: ExtractConfig
) -> tuple[tuple[FlagDef, ...], str]:
    """The file's flag definitions; a failure there is recorded, never allowed to lose sites."""
    if not may_define_flags(data, config.flag_classes, path):
        return (), ""
    try:
        return tuple(flags.flags_from_tree(tree, text, path, config.flag_classes)), ""
    except Exception as exc:  # noqa: BLE001 - a bug in flag extraction must not drop the sites
        return (), f"flags failed: {type(exc).__name__}: {exc}"
