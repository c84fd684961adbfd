"""Extracting a file function by function, reusing the cached sites of unchanged functions.

A file whose content changed usually changed in a few functions. The file is split into units
(`ingest.extract.units`); each unit has a cache key:
- a unit that mentions an exception name: "u:" + digest of its text, the three lines around it
  (its snippets may show them) and its class header. The cached `UnitResult` also holds a digest
  of what the extraction read outside the unit (the module and class statements binding names
  the unit uses), checked against the new file before the sites are reused;
- any other unit holds no site; "n:" + digest of its text records that it was seen to parse.

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
import hashlib
import re
import symtable
import warnings
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import NamedTuple

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
from errkb.ingest.extract.attributes import ClassAttributes, class_attributes
from errkb.ingest.extract.attributes import used as used_attributes
from errkb.ingest.extract.callers import call_texts
from errkb.ingest.extract.classes import class_defs
from errkb.ingest.extract.decode import FLAG_MARKER, decoded, may_define_flags, rejected
from errkb.ingest.extract.flag_defs import flag_class_globs
from errkb.ingest.extract.scope import Scope
from errkb.ingest.extract.sites import SiteFinder, lines_mentioning
from errkb.ingest.extract.snippet import CONTEXT_BELOW
from errkb.ingest.extract.source import SourceLines
from errkb.ingest.extract.units import Unit, aligned, masked, split_units

UNIT, VALID = "u:", "n:"
MIN_UNIT_BYTES = 4_000  # smaller files are parsed whole: splitting them saves nothing
# A snippet starts at most 2 lines above its unit (see extract.snippet), clamped at line 1: how
# many lines there are above a unit, up to this, is part of its key; the lines are read anew.
ABOVE = 3
_IDENT = re.compile(r"[^\W\d]\w*")
_CLASS = re.compile(r"\bclass\s+([^\W\d]\w*)")
# Statements that bind no name (`Scope.binds` finds none in them): skipped without asking.
_INERT = frozenset(
    {ast.Expr, ast.Pass, ast.Return, ast.Raise, ast.Assert, ast.Global, ast.Nonlocal}
)


class Split(NamedTuple):
    """A file's units, their cache keys, and which units hold sites or may define flags."""

    units: list[Unit]
    keys: list[str]
    markers: frozenset[int]  # units mentioning an exception name
    flagged: frozenset[int]  # units that may define flags: always parsed, never cached

    @property
    def lookups(self) -> list[str]:
        """The keys worth looking up in the cache."""
        return [key for k, key in enumerate(self.keys) if k not in self.flagged]


class Plan:
    """One file's text and `Split`; `split` is None when the file is not extracted by units."""

    def __init__(
        self, data: bytes, path: str, config: ExtractConfig, split: Split | None = None
    ) -> None:
        self.text: str = ""
        self.lines: list[str] = []
        self.split: Split | None = None
        self.flag_file = False
        if len(data) < MIN_UNIT_BYTES or rejected(data, path, config) is not None:
            return
        text = decoded(data)
        if not isinstance(text, str):
            return
        self.text = text
        self.lines = text.split("\n")
        self.flag_file = may_define_flags(data, config.flag_classes, path)
        self.split = split or self._split(path, config)

    def _split(self, path: str, config: ExtractConfig) -> Split | None:
        lines = self.lines
        units = split_units(self.text, lines)
        if not units:
            return None
        hits = lines_mentioning(self.text, config.markers)
        keys, markers = [], set()
        for k, u in enumerate(units):
            if _holds(hits, u.start, u.end):
                markers.add(k)
                above = min(u.start - 1, ABOVE)
                keys.append(UNIT + _digest(f"{u.owner}\0{above}\0{u.text(lines)}"))
            else:
                keys.append(VALID + _digest(u.text(lines)))
        flagged: set[int] = set()
        if self.flag_file:
            at = _flag_lines(self.text, flag_class_globs(config.flag_classes, path))
            flagged = {k for k, u in enumerate(units) if _holds(at, u.start, u.end)}
        return Split(units, keys, frozenset(markers), frozenset(flagged))


def _holds(lines: list[int], first: int, last: int) -> bool:
    """True when the sorted line numbers `lines` include one in first..last."""
    i = bisect_right(lines, last)
    return i > 0 and lines[i - 1] >= first


def _flag_lines(text: str, globs: tuple[str, ...]) -> list[int]:
    """Sorted numbers of the lines where a unit may define flags: an argparse call, or the
    `class` keyword of a flag class (as `_may_define` finds them, for the whole text at once)."""
    offsets = _find_all(text, FLAG_MARKER.decode())
    for pos in _find_all(text, "class"):  # `str.find` is far faster than a `\b` regex scan
        m = _CLASS.match(text, pos)
        if m is not None and _flag_class(m.group(1), globs):
            offsets.append(pos)
    offsets.sort()
    out, line, last = [], 1, 0
    for offset in offsets:
        line += text.count("\n", last, offset)
        last = offset
        out.append(line)
    return out


def _find_all(text: str, word: str) -> list[int]:
    """Every offset of `word` in text (overlaps included)."""
    out, pos = [], text.find(word)
    while pos >= 0:
        out.append(pos)
        pos = text.find(word, pos + 1)
    return out


def _flag_class(name: str, globs: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, g) for g in globs)


def _may_define(text: str, globs: tuple[str, ...]) -> bool:
    """True when text may define flags: an argparse call, or a flag class."""
    if FLAG_MARKER.decode() in text:
        return True
    return any(_flag_class(name, globs) for name in _CLASS.findall(text))


def split_file(data: bytes, path: str, config: ExtractConfig) -> Split | None:
    """The file's split, None when it is not extracted by units."""
    return Plan(data, path, config).split


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
    tree, text = _parse(plan, units, known | checked | set(reused))
    if tree is None:
        return None
    if checked and not _compiles(plan, units, checked, path):
        return None
    names = {
        k: frozenset(reused[k].names)
        if k in reused
        else frozenset(_IDENT.findall(units[k].text(lines)))
        for k in markers - flagged
    }
    contexts = _contexts(tree, plan, units, names, class_attributes(plan.text))
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
    for k, r in reused.items():
        sites.extend(_shifted(s, units[k].start - r.start, path, source) for s in r.sites)
    sites.sort(key=lambda s: s.line)
    rows = _rows(tree, plan, fresh, names, contexts)
    rows.update((keys[k], b"") for k in others - known)
    found_flags: tuple[FlagDef, ...] = ()
    detail = ""
    if plan.flag_file and (
        flagged or _may_define(text, flag_class_globs(config.flag_classes, path))
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
    wider = {k: names[k] | _read_outside(fresh[k]) for k in fresh}
    if any(wider[k] != names[k] for k in fresh):
        contexts = contexts | _contexts(tree, plan, units, wider, class_attributes(plan.text))
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


def _contexts(
    tree: ast.Module,
    plan: Plan,
    units: list[Unit],
    names: dict[int, frozenset[str]],
    attributes: ClassAttributes,
) -> dict[int, str]:
    """For each unit in `names` (the identifiers it uses), a digest of the module and class
    statements binding those names, of what its class assigns to `self.` those names, and of
    the calls of its function in the module (what its parameters are traced to)."""
    lines, text = plan.lines, plan.text
    module = _bindings(tree.body, lines)
    owners = {units[k].owner_line for k in names}
    classes = {
        s.lineno: _bindings(s.body, lines)
        for s in tree.body
        if isinstance(s, ast.ClassDef) and s.lineno in owners
    }
    out = {}
    for k, used in names.items():
        owner = classes.get(units[k].owner_line, {})
        u = units[k]
        mine = attributes.get(u.owner, {}) if u.owner else {}
        calls = "\0".join(call_texts(text, u.name, u.owner))
        parts = [_used(module, used), _used(owner, used), used_attributes(mine, used), calls]
        out[k] = _digest("\1".join(parts))
    return out


def _read_outside(sites: list[Site]) -> frozenset[str]:
    """The identifiers in the values the sites' conditions were traced to."""
    return frozenset(
        name
        for site in sites
        for condition in site.conditions
        for _, value in condition.resolved
        for name in _IDENT.findall(value)
    )


def _bindings(body: list[ast.stmt], lines: list[str]) -> dict[str, list[str]]:
    """name -> the source of each statement of `body` that binds it, in order.

    An import, function or class statement counts as `import` / `def name` / `class name`: what
    a lookup of such a name yields (`scope.Opaque`) does not depend on the rest of it.
    """
    scope = Scope(ast.Module(body=[], type_ignores=[]), body)
    out: dict[str, list[str]] = {}
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            word = "class" if kind is ast.ClassDef else "def"
            out.setdefault(stmt.name, []).append(f"{word} {stmt.name}")  # type: ignore[attr-defined]
            continue
        if kind in _INERT:
            continue
        names = scope.binds(stmt)
        if not names:
            continue
        if kind is ast.Import or kind is ast.ImportFrom:
            source = "import"  # an imported name is never resolved further
        else:
            source = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
        for name in names:
            out.setdefault(name, []).append(source)
    return out


def _used(bindings: dict[str, list[str]], names: frozenset[str]) -> str:
    return "\0".join(f"{n}\0" + "\0".join(bindings[n]) for n in sorted(names & bindings.keys()))


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


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
