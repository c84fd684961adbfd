"""The origins of every site of a snapshot, from its file texts, flags and vocabulary.

A site whose file is unchanged since a snapshot this process already traced keeps the origin it
had there (a history ingested in one run traces each release's changed files only); the callers
in other files are taken as they were then, which the next full trace of a process refreshes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

from errkb.core.origin import Origin
from errkb.core.records import FlagDef, Site, Vocabulary
from errkb.ingest.origins.reads import Rules, classes_named
from errkb.ingest.origins.site_origin import origin_of
from errkb.ingest.origins.snapshot_index import SnapshotIndex, in_tests


def snapshot_origins(
    texts: Mapping[str, str],
    sites: Sequence[Site],
    flags: Iterable[FlagDef],
    vocabulary: Vocabulary,
    flag_classes: tuple[str, ...] = (),
) -> list[Origin | None]:
    """One origin per site, in order (None for a site of the project's own tests)."""
    keys = [_key(s, texts) for s in sites]
    missing = [s for s, k in zip(sites, keys, strict=True) if k is not None and k not in _KEPT]
    if missing:
        found = _traced(texts, missing, flags, vocabulary, flag_classes)
        if len(_KEPT) + len(found) > _KEEP:
            _KEPT.clear()
        for site, origin in zip(missing, found, strict=True):
            key = _key(site, texts)
            if key is not None:
                _KEPT[key] = origin
    return [_KEPT.get(k) if k is not None else None for k in keys]


_KEPT: dict[tuple[object, ...], Origin | None] = {}
_KEEP = 400_000  # origins kept by site and file content, across the snapshots of a process


def _key(site: Site, texts: Mapping[str, str]) -> tuple[object, ...] | None:
    """What a site's origin depends on in its own file; None for sites never traced."""
    if site.kind == "import" or in_tests(site.path):
        return None
    text = texts.get(site.path, "")
    guard = tuple((c.kind, c.expr, c.holds) for c in site.conditions)
    return (site.path, hash(text), len(text), site.qualname, site.kind, site.check, guard)


def _traced(
    texts: Mapping[str, str],
    sites: Sequence[Site],
    flags: Iterable[FlagDef],
    vocabulary: Vocabulary,
    flag_classes: tuple[str, ...],
) -> list[Origin | None]:
    index = SnapshotIndex(texts)
    flag_names = {
        f.dest: (f.flags[0] if f.flags else "--" + f.dest.replace("_", "-")) for f in flags
    }
    specs = (*vocabulary.request_classes, *flag_classes)
    paths: set[str] = set()
    for spec in specs:  # the modules that define a class the specs name
        path_glob, _, class_glob = spec.rpartition(":")
        for name in fnmatch.filter(index.classes, class_glob):
            paths.update(
                p for p in index.classes[name] if not path_glob or fnmatchcase(p, path_glob)
            )
    fields = {p: index.facts(p).fields for p in sorted(paths)}
    request_types, request_fields = classes_named(vocabulary.request_classes, fields)
    flag_types, _ = classes_named(flag_classes, fields)
    rules = Rules(
        flag_names,
        vocabulary,
        frozenset(request_fields),
        frozenset(request_types),
        frozenset(flag_types),
    )
    return [origin_of(s, index, rules) for s in sites]
