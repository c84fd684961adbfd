"""The extraction results of one snapshot's files, worked out while the files are read.

Each file is settled by the cheapest means that is exact: an archive member whose compressed
stream an earlier snapshot stored (its digest maps to a content hash whose result is cached) is
not even inflated (`known`); then the byte prefilter, then the file cache (by content hash), then
extraction in the worker processes, function by function where the file's earlier versions left
cached units (`ingest.extract.incremental`). For a snapshot big enough to use the processes,
cache lookups run in batches as files arrive, and the workers start on the misses (splitting
them into units, or extracting them when no unit is cached) while the rest of the snapshot is
still being read. Cached results are decoded while the main process waits for the workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from sqlalchemy import Engine

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest import store
from errkb.ingest.cache_writer import CacheWriter
from errkb.ingest.extract import EXTRACTOR_VERSION
from errkb.ingest.extract.decode import EARLY_STATUSES, rejected
from errkb.ingest.extract.flag_defs import path_variant
from errkb.ingest.extract.incremental import MIN_UNIT_BYTES, UNIT
from errkb.ingest.filecache import decode_result, encode_result, extractor_key
from errkb.ingest.sources.base import SourceFile
from errkb.ingest.workers import PackedSplit, Workers, extract_chunk, split_chunk

INLINE_BYTES = 256_000  # below this much to parse, starting processes costs more than it saves
CHUNK_BYTES = 1_000_000
STREAM_BYTES = 8_000_000  # a snapshot this big will use the processes: start them while reading
LOOKUP_FILES = 400  # files per cache lookup while streaming
STORED = "stored:"  # file-cache key prefix: a stored digest (`SourceFile.stored`) -> content hash
SMALL_BLOB = 128  # cached results this small (early statuses) are decoded at once, once each

Extracted = tuple[tuple[FileResult, bytes], dict[str, bytes]]  # ((result, blob), unit rows)
Worked = tuple[FileResult, bytes, dict[str, bytes]]  # what `extract_chunk` returns per file


class Progress(Protocol):
    """Where the work reports its steps (see `ingest.pipeline.Progress`)."""

    def phase(self, description: str, total: int | None) -> None: ...

    def advance(self, steps: int = 1) -> None: ...


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


class FileResults:
    """Results by cache id for the files passed to `add`, complete after `finish`."""

    def __init__(
        self,
        config: ExtractConfig,
        engine: Engine,
        workers: Workers,
        on_result: Callable[[str, FileResult], None] | None = None,
    ) -> None:
        self.config = config
        self.on_result = on_result  # told each cached or extracted result as it comes in
        self.engine = engine
        self.workers = workers
        self.key = extractor_key(EXTRACTOR_VERSION, config)
        self.results: dict[str, FileResult] = {}
        self.files: list[SourceFile] = []
        self.hits = 0
        self.parsed = 0
        self._units = store.has_cached_units(engine, self.key)
        self._bytes = 0
        self._streaming = False
        self._pending: dict[str, SourceFile] = {}  # not looked up yet
        self._cached: set[str] = set()
        self._todo: dict[str, SourceFile] = {}  # cache misses, by id
        self._ids: list[str] = []  # of each file that was looked up, for the hit count
        self._known_ids: list[str] = []  # of each file settled by `known`, likewise
        self._splits: list[tuple[list[SourceFile], Future[list[PackedSplit | None]]]] = []
        self._extracts: list[tuple[list[SourceFile], Future[list[Worked]]]] = []
        self._sent: set[str] = set()  # ids already sent to a worker
        # For files with a stored digest: digest -> content hash, and their early results, so
        # that a later snapshot can settle them without reading them (`known`).
        self._stored_rows: dict[str, bytes] = {}
        self._small: dict[bytes, FileResult] = {}  # decoded small blobs, by blob
        self._early_blobs: dict[tuple[str, str], bytes] = {}  # encoded early results
        # New cache rows are written while the workers parse, except the function-unit rows
        # ("u:"), whose value depends on which file holding the unit gives it: those are chosen
        # in `finish`, the same whatever order the workers finish in, and written last.
        self._writer = CacheWriter(engine, self.key)
        # Cached results not decoded yet: they are decoded while the workers parse (`_waiting`),
        # not while the files are read, when the workers may still be waiting for work.
        self._later: dict[str, bytes] = {}

    def known(self, members: Sequence[tuple[str, str]]) -> dict[str, str]:
        """What the source may leave unread (`ingest.sources.base.KnownFiles`): of these (path,
        stored digest), the content hash of each whose result is in the file cache, by digest.
        Those results are loaded now (decoded later, see `_later`)."""
        found = store.load_cache(self.engine, self.key, [STORED + d for _, d in members])
        if not found:
            return {}
        hashes = {d: found[STORED + d].decode() for _, d in members if STORED + d in found}
        # Members with the same bytes may still need results of their own (`result_id`).
        ids = {(p, d): result_id(p, hashes[d], self.config) for p, d in members if d in hashes}
        blobs = store.load_cache(self.engine, self.key, set(ids.values()))
        for i in set(ids.values()) & blobs.keys():
            self._settle(i, blobs[i])
        missing = {d for (_, d), i in ids.items() if i not in blobs}
        return {d: h for d, h in hashes.items() if d not in missing}

    def add(self, f: SourceFile) -> None:
        """One file of the snapshot, as it is read."""
        self.files.append(f)
        if f.skip is not None:
            return
        h = cache_id(f, self.config)
        if f.known:  # settled by `known`, unread
            self._known_ids.append(h)
            return
        if f.stored is not None:
            self._stored_rows[STORED + f.stored] = f.content_hash.encode()
        early = rejected(f.data, f.path, self.config)
        if early is not None:
            self.results[h] = early
            if f.stored is not None:
                self._stored_rows[h] = self._encoded_early(early)
            return
        self._ids.append(h)
        self._pending.setdefault(h, f)
        self._bytes += len(f.data)
        if not self._streaming and self._bytes >= STREAM_BYTES and self.workers.count > 1:
            self._streaming = True
            self.workers.warm()
        if self._streaming and len(self._pending) >= LOOKUP_FILES:
            self._lookup()
            self._dispatch()
            self._chain(wait=False)

    def finish(self, progress: Progress) -> dict[str, FileResult]:
        """Every file's result; the last new cache rows queued for writing (see `close`)."""
        self._lookup()
        if self._streaming:
            self._dispatch()
        progress.phase("parsing", len(self._todo))
        self._chain()
        fresh = self._extract(self._unit_rows(), progress)
        self._waiting()
        rows: dict[str, bytes] = {}
        for h in sorted(fresh):  # a unit in several files: the same row whatever the order
            for k, v in fresh[h][1].items():
                if k.startswith(UNIT):
                    rows.setdefault(k, v)
        self._writer.put(rows | self._stored_rows)
        self._stored_rows = {}
        self.results.update((h, r) for h, ((r, _), _) in fresh.items())
        self.parsed = sum(1 for (r, _), _ in fresh.values() if r.parsed)
        self.hits = sum(1 for h in self._ids if h in self._cached) + sum(
            1 for h in self._known_ids if self.results[h].status not in EARLY_STATUSES
        )
        return self.results

    def close(self) -> None:
        """Return once every new cache row is written (the last ones are queued by `finish`, so
        the caller links the sites meanwhile)."""
        self._writer.close()

    def _take(self, done: list[tuple[str, Worked]], out: dict[str, Extracted]) -> None:
        """Extracted files, by cache id: kept in `out` and reported, and their cache rows (the
        result, and its unit rows but "u:") queued for writing."""
        rows: dict[str, bytes] = {}
        for h, (result, blob, units) in done:
            out[h] = ((result, blob), units)
            if self.on_result is not None:
                self.on_result(h, result)
            rows[h] = blob
            rows.update((k, v) for k, v in units.items() if not k.startswith(UNIT))
        self._writer.put(rows)

    def _settle(self, h: str, blob: bytes) -> None:
        """A cached result found: the few distinct small ones (early statuses, never deferred)
        are decoded once each, now; the others are left for `_waiting`."""
        if len(blob) > SMALL_BLOB:
            self._later[h] = blob
            return
        if (result := self._small.get(blob)) is None:
            result = self._small[blob] = decode_result(blob)
        self._settled(h, result)

    def _settled(self, h: str, result: FileResult) -> None:
        """A result, now known."""
        self.results[h] = result
        if self.on_result is not None:
            self.on_result(h, result)

    def _waiting(self, future: Future[Any] | None = None) -> None:
        """Decode deferred cached results until `future` is done (all of them without one)."""
        later = self._later
        while later and (future is None or not future.done()):
            h, blob = later.popitem()
            self._settled(h, decode_result(blob))

    def _encoded_early(self, early: FileResult) -> bytes:
        """An early result for the file cache, each distinct one encoded once."""
        key = (early.status, early.detail)
        if (blob := self._early_blobs.get(key)) is None:
            blob = self._early_blobs[key] = encode_result(early)
        return blob

    def _lookup(self) -> None:
        """Look the pending files up in the file cache; misses join the work to do."""
        if not self._pending:
            return
        self._writer.put(self._stored_rows)
        self._stored_rows = {}
        blobs = store.load_cache(self.engine, self.key, self._pending)
        for h, b in blobs.items():
            self._settle(h, b)
        self._cached.update(blobs)
        for h, f in self._pending.items():
            if h not in blobs:
                self._todo.setdefault(h, f)
        self._pending = {}

    def _dispatch(self) -> None:
        """Start workers on the misses not sent yet: split them (units cached) or extract them."""
        new = {h: f for h, f in self._todo.items() if h not in self._sent}
        if not new:
            return
        self._sent.update(new)
        if self._units:
            big = [f for f in new.values() if len(f.data) >= MIN_UNIT_BYTES]
            for group in _chunks(big, CHUNK_BYTES):
                pairs = [(f.path, f.data) for f in group]
                self._splits.append((group, self.workers.submit(split_chunk, pairs, self.config)))
        else:
            for group in _chunks(list(new.values()), CHUNK_BYTES):
                items: list[tuple[str, bytes, dict[str, bytes], bytes | None]] = [
                    (f.path, f.data, {}, None) for f in group
                ]
                future = self.workers.submit(extract_chunk, items, self.config)
                self._extracts.append((group, future))

    def _chain(self, wait: bool = True) -> None:
        """As each streamed split comes back, look its units up and send its files to extract
        (only the splits already done, unless `wait`)."""
        waiting = []
        for group, future in self._splits:
            if not wait and not future.done():
                waiting.append((group, future))
                continue
            self._waiting(future)
            found = future.result()
            keys = {k for split in found if split is not None for k in split.lookups}
            rows = store.load_cache(self.engine, self.key, keys)
            items = [(f.path, f.data, *_cached(rows, s)) for f, s in zip(group, found, strict=True)]
            self._extracts.append((group, self.workers.submit(extract_chunk, items, self.config)))
        self._splits = waiting

    def _unit_rows(self) -> dict[str, tuple[dict[str, bytes], bytes | None]]:
        """cache id -> (cached unit rows, split) of each changed file that has any, for the
        files not streamed (`_chain` handles those)."""
        if not self._todo or not self._units or self._streaming:
            return {}
        splits: dict[str, PackedSplit] = {}
        big = [f for f in self._todo.values() if len(f.data) >= MIN_UNIT_BYTES]
        chunks = [[(f.path, f.data) for f in c] for c in _chunks(big, _limit(big, self.workers))]
        by_path = {f.path: h for h, f in self._todo.items()}
        for pairs, found in self.workers.map(split_chunk, chunks, self.config, inline=_inline(big)):
            for (path, _), split in zip(pairs, found, strict=True):
                if split is not None:
                    splits[by_path[path]] = split
        keys = {k for s in splits.values() for k in s.lookups}
        rows = store.load_cache(self.engine, self.key, keys)
        return {h: _cached(rows, s) for h, s in splits.items()}

    def _extract(
        self, units: dict[str, tuple[dict[str, bytes], bytes | None]], progress: Progress
    ) -> dict[str, Extracted]:
        """Extract every miss not extracted yet (keyed by cache id)."""
        out: dict[str, Extracted] = {}
        for sent, future in self._extracts:
            self._waiting(future)
            worked = future.result()
            self._take(
                [(cache_id(f, self.config), w) for f, w in zip(sent, worked, strict=True)], out
            )
            progress.advance(len(sent))
        todo = {h: f for h, f in self._todo.items() if h not in out}
        files = list(todo.values())
        by_path = {f.path: h for h, f in todo.items()}  # one file per cache id: paths unique
        chunks = [
            [(f.path, f.data, *units.get(by_path[f.path], ({}, None))) for f in group]
            for group in _chunks(files, _limit(files, self.workers))
        ]
        mapped = self.workers.map(extract_chunk, chunks, self.config, inline=_inline(files))
        for items, results in mapped:
            self._take([(by_path[p], w) for (p, *_), w in zip(items, results, strict=True)], out)
            progress.advance(len(items))
        return out


def _cached(
    rows: dict[str, bytes], split: PackedSplit | None
) -> tuple[dict[str, bytes], bytes | None]:
    """The cache rows found for a file's unit keys, and its packed split, for `extract_chunk`."""
    if split is None:
        return {}, None
    return {k: rows[k] for k in split.lookups if k in rows}, split.split


def _limit(files: Sequence[SourceFile], workers: Workers) -> int:
    """Bytes per chunk: about six chunks per core, within bounds."""
    total = sum(len(f.data) for f in files)
    return max(64_000, min(CHUNK_BYTES, total // (workers.count * 6) + 1))


def _inline(files: Iterable[SourceFile]) -> bool:
    """True when there is too little to parse to be worth starting processes."""
    return sum(len(f.data) for f in files) < INLINE_BYTES


def _chunks(files: Sequence[SourceFile], limit: int) -> list[list[SourceFile]]:
    """Files grouped into chunks of about `limit` bytes, biggest first to balance the cores."""
    chunks: list[list[SourceFile]] = []
    current: list[SourceFile] = []
    size = 0
    for f in sorted(files, key=lambda f: -len(f.data)):
        current.append(f)
        size += len(f.data)
        if size >= limit:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks
