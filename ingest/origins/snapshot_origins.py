"""The origins of every site of a snapshot, from its file texts, flags and vocabulary.

A site whose file is unchanged since a snapshot already traced (in this process, or in the store
the ingest gives) keeps the origin it had there (`kept.site_key`): a history traces each
release's changed files only, and the texts are read only when some site is left to trace. The
callers in other files are taken as they were then, which the next full trace refreshes.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

from errkb.core.origin import Origin
from errkb.core.records import FlagDef, Site, Vocabulary
from errkb.ingest.origins.kept import Kept, Store, config_digest, site_key, text_digest
from errkb.ingest.origins.module_facts import ModuleFacts
from errkb.ingest.origins.reads import Rules, classes_named
from errkb.ingest.origins.site_origin import origin_of
from errkb.ingest.origins.snapshot_index import SnapshotIndex, in_tests
from errkb.ingest.origins.split import traced

Texts = Mapping[str, str] | Callable[[], Mapping[str, str]]
# Module facts of many texts at once, with their stored form (`module_facts.facts_of_texts`,
# run in other processes by the pipeline)
MakeFacts = Callable[[list[str]], Iterable[tuple[ModuleFacts, bytes]]]


def snapshot_origins(
    texts: Texts,
    sites: Sequence[Site],
    flags: Iterable[FlagDef],
    vocabulary: Vocabulary,
    flag_classes: tuple[str, ...] = (),
    *,
    digests: Mapping[str, str] | None = None,
    store: Store | None = None,
    make_facts: MakeFacts | None = None,
    ready: Callable[[], None] = lambda: None,
) -> list[Origin | None]:
    """One origin per site, in order (None for a site of the project's own tests).

    `texts` may be a function that reads them, called only when a site is left to trace;
    `digests` names each file's content (path -> its hash), else the texts are hashed. `store`
    keeps facts and origins for other processes. `make_facts`, when given, makes the facts of
    every file not kept at once, before the trace asks for them one by one. `ready` runs once
    the trace needs `make_facts` no more (the pipeline then starts parsing the next snapshot on
    the other core)."""
    read = _Lazy(texts)
    if digests is None:
        digests = {path: text_digest(text) for path, text in read().items()}
    config = config_digest(vocabulary, flag_classes)
    keys = [_key(s, digests, config) for s in sites]
    kept = Kept(store)
    found = kept.origins([k for k in keys if k is not None])
    missing = {k: s for s, k in zip(sites, keys, strict=True) if k is not None and k not in found}
    if missing:
        index = SnapshotIndex(read(), digests, kept)
        if make_facts is not None:
            todo = kept.facts_to_make(index.digests)
            made = make_facts([index.texts[path] for path in todo.values()])
            for digest, (facts, encoded) in zip(todo, made, strict=True):
                kept.add_facts(digest, facts, encoded)
        rules = _rules(index, flags, vocabulary, flag_classes)
        origins = traced(
            list(missing.values()),
            lambda site: origin_of(site, index, rules),
            kept.detach,  # the forked helper reads no store: an SQLite connection stays here
            ready,
        )
        for key, origin in zip(missing, origins, strict=True):
            if origin is not None:
                found[key] = origin
                kept.add_origin(key, origin)
    else:
        ready()
    kept.flush()
    return [found.get(k) if k is not None else None for k in keys]


class _Lazy:
    def __init__(self, texts: Texts) -> None:
        self._texts = texts

    def __call__(self) -> Mapping[str, str]:
        if callable(self._texts):
            self._texts = self._texts()
        return self._texts


def _key(site: Site, digests: Mapping[str, str], config: str) -> bytes | None:
    """The key of a site's origin; None for sites never traced."""
    if site.kind == "import" or in_tests(site.path):
        return None
    return site_key(site, digests.get(site.path) or text_digest(""), config)


def _rules(
    index: SnapshotIndex,
    flags: Iterable[FlagDef],
    vocabulary: Vocabulary,
    flag_classes: tuple[str, ...],
) -> Rules:
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
    return Rules(
        flag_names,
        vocabulary,
        frozenset(request_fields),
        frozenset(request_types),
        frozenset(flag_types),
    )
