"""The sites of a snapshot with where their guarded values come from: the value-origin index
(`ingest.origins`) as the pipeline runs it, with the cache folder's store and the parse
processes making the module facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from errkb.core.records import FlagDef, Site
from errkb.ingest.origin_store import OriginStore
from errkb.ingest.origin_texts import snapshot_texts
from errkb.ingest.origins.module_facts import ModuleFacts
from errkb.ingest.origins.snapshot_origins import MakeFacts, snapshot_origins
from errkb.ingest.origins.stored_facts import facts_of_texts
from errkb.ingest.pins import RepoPin
from errkb.ingest.sources.base import Source, SourceFile
from errkb.ingest.workers import Workers


def with_origins(
    source: Source,
    files: Sequence[SourceFile],
    sites: list[Site],
    flags: list[FlagDef],
    repo: RepoPin,
    cache_dir: Path | None = None,
    workers: Workers | None = None,
    ready: Callable[[], None] = lambda: None,
) -> list[Site]:
    """The sites with where their guarded values come from, traced over the whole snapshot;
    the files are read again only when a site's origin is not kept from before, and the module
    facts the trace reads are made on the parse processes (`workers`) first (`ready` runs once
    they are made)."""
    digests = {f.path: f.content_hash for f in files if f.skip is None}
    store = OriginStore(cache_dir / "origins") if cache_dir is not None else None
    try:
        origins = snapshot_origins(
            lambda: snapshot_texts(source, files),
            sites,
            flags,
            repo.vocabulary(),
            repo.flag_classes,
            digests=digests,
            store=store,
            make_facts=facts_maker(workers) if workers is not None else None,
            ready=ready,
        )
    finally:
        if store is not None:
            store.close()
    return [
        replace(s, origin=o) if o is not None else s for s, o in zip(sites, origins, strict=True)
    ]


FACTS_CHUNK = 400_000  # characters of module text per task of a parse process


def facts_maker(workers: Workers) -> MakeFacts:
    """Module facts of many texts, made on the parse processes in chunks, in order."""

    def make(texts: list[str]) -> Iterator[tuple[ModuleFacts, bytes]]:
        chunks: list[list[str]] = [[]]
        size = 0
        for text in texts:
            if size >= FACTS_CHUNK:
                chunks.append([])
                size = 0
            chunks[-1].append(text)
            size += len(text)
        for _, made in workers.map(facts_of_texts, [c for c in chunks if c]):
            yield from made

    return make
