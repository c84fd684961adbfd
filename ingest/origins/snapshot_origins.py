"""The origins of every site of a snapshot, from its file texts, flags and vocabulary."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

from errkb.core.origin import Origin
from errkb.core.records import FlagDef, Site, Vocabulary
from errkb.ingest.origins.reads import Rules, classes_named
from errkb.ingest.origins.site_origin import origin_of
from errkb.ingest.origins.snapshot_index import SnapshotIndex


def snapshot_origins(
    texts: Mapping[str, str],
    sites: Sequence[Site],
    flags: Iterable[FlagDef],
    vocabulary: Vocabulary,
    flag_classes: tuple[str, ...] = (),
) -> list[Origin | None]:
    """One origin per site, in order (None for a site of the project's own tests)."""
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
