"""What the file cache already knows about a snapshot's files, looked up in batches.

Files are looked up by cache id as they arrive; archive members and git blobs whose stored
digest an earlier snapshot recorded are settled before they are even read (`known`). New rows are
queued on the background `CacheWriter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from errkb.core.packed import ZSTD_MAGIC, unpack
from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest import store
from errkb.ingest.cache_packing import PURPOSE, SAMPLE_BYTES, TRAIN_ON, CachePacker
from errkb.ingest.cache_writer import CacheWriter
from errkb.ingest.extract.flag_classes import path_variant
from errkb.ingest.filecache import encode_result
from errkb.ingest.result_set import ResultSet
from errkb.ingest.sources.base import SourceFile

STORED = "stored:"  # file-cache key prefix: a stored digest (`SourceFile.stored`) -> content hash


def cache_id(f: SourceFile, config: ExtractConfig) -> str:
    """The file-cache identity of a file (see `result_id`)."""
    return result_id(f.path, f.content_hash, config)


def result_id(path: str, content_hash: str, config: ExtractConfig) -> str:
    """The file-cache identity: the content hash, plus the path variant when the path matters.

    Path-glob flag classes make a file's result depend on where it sits, so the same bytes at a
    matching and a non-matching path must not share one cached result.
    """
    variant = path_variant(config.flag_classes, path)
    return f"{content_hash}:{variant}" if variant else content_hash


def _packer(engine: Engine, key: str) -> CachePacker:
    """How this snapshot's new rows are packed: with the knowledge base's trained dictionary, or
    (none yet) training one once enough results, stored ones included, are at hand."""
    trained = store.load_dictionaries(engine, PURPOSE)
    if trained is not None:
        return CachePacker(trained)
    # packed, a result of SAMPLE_BYTES takes about a third of that
    return CachePacker(None, store.stored_results(engine, key, TRAIN_ON, SAMPLE_BYTES // 3))


class CacheLookup:
    """Pending lookups, what they found, and the stored-digest rows still to write."""

    def __init__(self, engine: Engine, key: str, config: ExtractConfig, results: ResultSet) -> None:
        self.engine = engine
        self.key = key
        self.config = config
        self.results = results
        self.writer = CacheWriter(
            engine, key, CachePacker(store.load_dictionaries(engine, PURPOSE))
        )
        self.has_units = store.has_cached_units(engine, key)
        self.pending: dict[str, SourceFile] = {}  # not looked up yet
        self.found: set[str] = set()  # ids whose result was in the cache
        self.looked_up: list[str] = []  # id of each file looked up, for the hit count
        self.known_ids: list[str] = []  # id of each file settled by `known`, likewise
        # For files with a stored digest: digest -> content hash, and their early results, so
        # that a later snapshot can settle them without reading them (`known`).
        self.stored_rows: dict[str, bytes] = {}
        self._early_blobs: dict[tuple[str, str], bytes] = {}

    def known(self, members: Sequence[tuple[str, str]]) -> dict[str, str]:
        """Of these (path, stored digest), the content hash of each whose result is cached,
        by digest (`ingest.sources.base.KnownFiles`); their results are loaded now."""
        found = store.load_cache(self.engine, self.key, [STORED + d for _, d in members])
        if not found:
            return {}
        hashes = {d: found[STORED + d].decode() for _, d in members if STORED + d in found}
        # Members with the same bytes may still need results of their own (`result_id`).
        ids = {(p, d): result_id(p, hashes[d], self.config) for p, d in members if d in hashes}
        blobs = store.load_cache(self.engine, self.key, set(ids.values()))
        for i in set(ids.values()) & blobs.keys():
            self.results.put_cached(i, blobs[i])
        missing = {d for (_, d), i in ids.items() if i not in blobs}
        return {d: h for d, h in hashes.items() if d not in missing}

    def remember_stored(self, f: SourceFile) -> None:
        """Record a file's stored digest -> content hash, for later snapshots' `known`."""
        if f.stored is not None:
            self.stored_rows[STORED + f.stored] = f.content_hash.encode()

    def remember_early(self, f: SourceFile, h: str, early: FileResult) -> None:
        """Cache an early result of a file with a stored digest (each distinct one encoded once)."""
        if f.stored is None:
            return
        key = (early.status, early.detail)
        if (blob := self._early_blobs.get(key)) is None:
            blob = self._early_blobs[key] = encode_result(early)
        self.stored_rows[h] = blob

    def enqueue(self, h: str, f: SourceFile) -> None:
        """A file to look up with the next batch."""
        self.looked_up.append(h)
        self.pending.setdefault(h, f)

    def flush_stored(self) -> dict[str, bytes]:
        """The stored-digest rows gathered so far, handed over (and forgotten here)."""
        rows, self.stored_rows = self.stored_rows, {}
        return rows

    def lookup(self) -> dict[str, SourceFile]:
        """Look the pending files up; the hits go to the result set, the misses are returned."""
        if not self.pending:
            return {}
        self.writer.put(self.flush_stored())
        blobs = store.load_cache(self.engine, self.key, self.pending)
        for h, b in blobs.items():
            self.results.put_cached(h, b)
        self.found.update(blobs)
        misses = {h: f for h, f in self.pending.items() if h not in blobs}
        self.pending = {}
        return misses

    def rows(self, keys: set[str]) -> dict[str, bytes]:
        """Cached rows by key (function units of changed files), for the workers: rows packed
        with a trained dictionary are handed on unpacked (the workers do not load those)."""
        rows = store.load_cache(self.engine, self.key, keys)
        return {k: unpack(b) if b[:4] == ZSTD_MAGIC else b for k, b in rows.items()}
