"""Extracting a file function by function, reusing the cached sites of unchanged functions.

A file whose content changed usually changed in a few functions. The file is split into units
(`ingest.extract.units`), each with a cache key (`ingest.extract.unit_keys`): "u:" for a unit
that mentions an exception name, "n:" for one that holds no site and was seen to parse. The
cached `UnitResult` of a "u:" unit also holds a digest of what the extraction read outside the
unit (`ingest.extract.unit_context`), checked against the new file before the sites are reused.

Only the units without a usable cache row are parsed, with the rest of the module (imports,
constants, class bodies) around them; the others stand in as `def name(): pass`. A unit hidden
that way has parsed before, or (a new unit without sites) is compiled on its own with
`symtable`, which parses without building Python objects; so a syntax error anywhere still
fails the whole file as a full parse would (`symtable` also rejects a few scoping errors that
`ast.parse` lets through; then the file is parsed whole). A file with no cached unit is parsed
whole, and its units cached. Any doubt
(a split the parsed tree disagrees with) falls back to `extract_file`, which is always right;
the records produced are the same either way (tests/ingest/test_extract_incremental.py checks
this on real sglang releases).
"""

from __future__ import annotations

import ast
import re
import symtable
import warnings
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import replace

from errkb.core.packed import pack, unpack
from errkb.core.records import (
    UNIT_RESULT,
    ExtractConfig,
    FileResult,
    FlagDef,
    Site,
    Snippet,
    UnitResult,
)
from errkb.ingest.extract import flags_of
from errkb.ingest.extract.attributes import class_attributes
from errkb.ingest.extract.classes import class_defs
from errkb.ingest.extract.decode import may_import
from errkb.ingest.extract.flag_classes import flag_class_globs
from errkb.ingest.extract.flag_lines import may_define
from errkb.ingest.extract.imports import import_sites
from errkb.ingest.extract.sites import SiteFinder
from errkb.ingest.extract.snippet import CONTEXT_BELOW
from errkb.ingest.extract.source import SourceLines
from errkb.ingest.extract.unit_context import IDENT, context_digests, read_outside
from errkb.ingest.extract.unit_keys import Plan, Split
from errkb.ingest.extract.units import Unit, aligned, masked

# An import statement's line: a unit hiding one cannot stand in as `def name(): pass` when import
# sites are read (they are taken from the module's tree, not cached per unit).
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s", re.M)


def encode_unit(result: UnitResult) -> bytes:
    """A UnitResult as compressed JSON (stored in the file cache under its "u:" key)."""
    return pack(UNIT_RESULT.dump_json(result))


def decode_unit(blob: bytes) -> UnitResult:
    """The UnitResult stored by `encode_unit`."""
    return UNIT_RESULT.validate_json(unpack(blob))


def extract_by_units(
    data: bytes,
    path: str,
    config: ExtractConfig,
    cached: Mapping[str, bytes],
    split: Split | None = None,
) -> tuple[FileResult, dict[str, bytes]] | None:
    """The file's result from its units plus the new unit cache rows; None to parse it whole.

    `cached` holds the cache rows found for this file's unit keys; `split` is the file's
    `split_file`, when already computed.
    """
    plan = Plan(data, path, config, split)
    if plan.split is None:
        return None
    units, keys, lines = plan.split.units, plan.split.keys, plan.lines
    markers, flagged = plan.split.markers, plan.split.flagged
    reused: dict[int, UnitResult] = {}
    for k in markers - flagged:
        blob = cached.get(keys[k])
        if blob is not None:
            reused[k] = decode_unit(blob)
    others = set(range(len(units))) - markers - flagged
    known = {k for k in others if keys[k] in cached}
    # In a file seen before, functions without sites that are new are only checked to compile,
    # without building their trees; a file never seen is parsed whole.
    checked = others - known if cached else set()
    reads_imports = may_import(data, config)
    if reads_imports and any(
        _IMPORT_LINE.search(units[k].text(lines)) for k in known | checked | set(reused)
    ):
        return None
    tree, text = _parse(plan, units, known | checked | set(reused))
    if tree is None:
        return None
    if checked and not _compiles(plan, units, checked, path):
        return None
    names = {
        k: frozenset(reused[k].names)
        if k in reused
        else frozenset(IDENT.findall(units[k].text(lines)))
        for k in markers - flagged
    }
    contexts = context_digests(tree, plan, units, names, class_attributes(plan.text))
    stale = {k for k, r in reused.items() if r.context != contexts[k]}
    if stale:
        for k in stale:
            del reused[k]
        tree, text = _parse(plan, units, known | checked | set(reused))
        if tree is None:
            return None
    source = SourceLines(plan.text, plan.lines)
    try:
        found = SiteFinder(source, path, config, text).run(tree)
    except (RecursionError, MemoryError):
        return None
    starts = [u.start for u in units]
    fresh: dict[int, list[Site]] = {k: [] for k in markers - flagged if k not in reused}
    sites: list[Site] = []
    for site in found:
        k = bisect_right(starts, site.line) - 1
        if k in fresh and site.line <= units[k].end:
            fresh[k].append(site)
        sites.append(site)
    if reads_imports:
        sites.extend(import_sites(tree, source, path, config.own_packages))
    for k, r in reused.items():
        sites.extend(_shifted(s, units[k].start - r.start, path, source) for s in r.sites)
    sites.sort(key=lambda s: s.line)
    rows = _rows(tree, plan, fresh, names, contexts)
    rows.update((keys[k], b"") for k in others - known)
    found_flags: tuple[FlagDef, ...] = ()
    detail = ""
    if plan.flag_file and (
        flagged or may_define(text, flag_class_globs(config.flag_classes, path))
    ):
        found_flags, detail = flags_of(data, tree, plan.text, path, config)
    classes = class_defs(tree.body) if config.every_class else ()
    result = FileResult("ok", tuple(sites), found_flags, detail, True, classes)
    return result, rows


def _rows(
    tree: ast.Module,
    plan: Plan,
    fresh: dict[int, list[Site]],
    names: dict[int, frozenset[str]],
    contexts: dict[int, str],
) -> dict[str, bytes]:
    """The cache rows of the freshly extracted units.

    A fresh unit's sites may quote values found outside it (a parameter traced to a caller's
    argument naming a module constant): its key covers the bindings of those names too.
    """
    assert plan.split is not None
    units, keys = plan.split.units, plan.split.keys
    wider = {k: names[k] | read_outside(fresh[k]) for k in fresh}
    if any(wider[k] != names[k] for k in fresh):
        contexts = contexts | context_digests(tree, plan, units, wider, class_attributes(plan.text))
    return {
        keys[k]: encode_unit(
            UnitResult(contexts[k], units[k].start, tuple(fresh[k]), tuple(sorted(wider[k])))
        )
        for k in fresh
    }


def _compiles(plan: Plan, units: list[Unit], check: set[int], path: str) -> bool:
    """True when the `check` units compile (`symtable`: parsed, scopes built; no Python trees).

    They are compiled on their own, each method under a stub of its class header.
    """
    lines = [""] * len(plan.lines)
    for k in check:
        u = units[k]
        lines[u.start - 1 : u.end] = plan.lines[u.start - 1 : u.end]
        if u.owner_line:
            lines[u.owner_line - 1] = f"class {u.owner}:"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            symtable.symtable("\n".join(lines), path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _parse(plan: Plan, units: list[Unit], hide: set[int]) -> tuple[ast.Module | None, str]:
    """The tree of the module with the `hide` units as stand-ins, if it parses and lines up."""
    text = masked(plan.lines, units, hide) if hide else plan.text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, text
    return (tree if aligned(tree, units, hide) else None), text


def _shifted(site: Site, delta: int, path: str, source: SourceLines) -> Site:
    """A cached site moved `delta` lines, at `path`, its snippet lines read from `source`.

    The snippet window moves with the unit, except that its end is clamped to the file's end
    (as `snippet_for` does); its lines around the unit may differ, so they are read again.
    """
    snippet = site.snippet
    first = snippet.start + delta
    last = min(len(source), snippet.raise_end + delta + CONTEXT_BELOW)
    return replace(
        site,
        path=path,
        line=site.line + delta,
        end_line=site.end_line + delta,
        conditions=tuple(replace(c, line=c.line + delta) for c in site.conditions)
        if delta
        else site.conditions,
        snippet=Snippet(
            start=first,
            lines=source.window(first, last),
            raise_start=snippet.raise_start + delta,
            raise_end=snippet.raise_end + delta,
        ),
    )
