"""Sending cache misses to the worker processes and gathering what they extract.

For a snapshot big enough to use the processes, the workers start on the misses while the rest
of the snapshot is still being read: files whose earlier versions left cached function units are
split first (`split_chunk`), their units looked up, then extracted; the others are extracted
whole. Whatever was not streamed is extracted in `extract_rest`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest.cache_lookup import CacheLookup, cache_id
from errkb.ingest.extract.unit_keys import MIN_UNIT_BYTES, UNIT
from errkb.ingest.progress import Progress
from errkb.ingest.result_set import ResultSet
from errkb.ingest.sources.base import SourceFile
from errkb.ingest.workers import PackedSplit, Workers, extract_chunk, split_chunk

INLINE_BYTES = 256_000  # below this much to parse, starting processes costs more than it saves
CHUNK_BYTES = 1_000_000

Extracted = tuple[tuple[FileResult, bytes], dict[str, bytes]]  # ((result, blob), unit rows)
Worked = tuple[FileResult, bytes, dict[str, bytes]]  # what `extract_chunk` returns per file
Units = tuple[dict[str, bytes], bytes | None]  # a file's cached unit rows and its packed split


class WorkerDispatch:
    """The misses to extract, what is in flight in the workers, and what came back."""

    def __init__(
        self,
        config: ExtractConfig,
        workers: Workers,
        cache: CacheLookup,
        results: ResultSet,
        on_rows: Callable[[dict[str, bytes]], None],
    ) -> None:
        self.config = config
        self.workers = workers
        self.cache = cache
        self.results = results
        self.on_rows = on_rows  # new cache rows of extracted files, written in the background
        self.todo: dict[str, SourceFile] = {}  # cache misses, by id
        self._sent: set[str] = set()  # ids already sent to a worker
        self._splits: list[tuple[list[SourceFile], Future[list[PackedSplit | None]]]] = []
        self._extracts: list[tuple[list[SourceFile], Future[list[Worked]]]] = []
        self.streaming = False

    def add_misses(self, misses: dict[str, SourceFile]) -> None:
        """Files the cache did not know."""
        for h, f in misses.items():
            self.todo.setdefault(h, f)

    def send(self) -> None:
        """Start workers on the misses not sent yet: split them (units cached) or extract them."""
        new = {h: f for h, f in self.todo.items() if h not in self._sent}
        if not new:
            return
        self._sent.update(new)
        if self.cache.has_units:
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

    def chain(self, wait: bool = True) -> None:
        """As each streamed split comes back, look its units up and send its files to extract
        (only the splits already done, unless `wait`)."""
        waiting = []
        for group, future in self._splits:
            if not wait and not future.done():
                waiting.append((group, future))
                continue
            self.results.decode_until(future)
            found = future.result()
            keys = {k for split in found if split is not None for k in split.lookups}
            rows = self.cache.rows(keys)
            items = [(f.path, f.data, *_cached(rows, s)) for f, s in zip(group, found, strict=True)]
            self._extracts.append((group, self.workers.submit(extract_chunk, items, self.config)))
        self._splits = waiting

    def unit_rows(self) -> dict[str, Units]:
        """cache id -> (cached unit rows, split) of each changed file that has any, for the
        files not streamed (`chain` handles those)."""
        if not self.todo or not self.cache.has_units or self.streaming:
            return {}
        splits: dict[str, PackedSplit] = {}
        big = [f for f in self.todo.values() if len(f.data) >= MIN_UNIT_BYTES]
        chunks = [[(f.path, f.data) for f in c] for c in _chunks(big, _limit(big, self.workers))]
        by_path = {f.path: h for h, f in self.todo.items()}
        for pairs, found in self.workers.map(split_chunk, chunks, self.config, inline=_inline(big)):
            for (path, _), split in zip(pairs, found, strict=True):
                if split is not None:
                    splits[by_path[path]] = split
        keys = {k for s in splits.values() for k in s.lookups}
        rows = self.cache.rows(keys)
        return {h: _cached(rows, s) for h, s in splits.items()}

    def extract_rest(self, units: dict[str, Units], progress: Progress) -> dict[str, Extracted]:
        """Every miss extracted (keyed by cache id): the streamed ones gathered, the rest run."""
        out: dict[str, Extracted] = {}
        for sent, future in self._extracts:
            self.results.decode_until(future)
            worked = future.result()
            self._take(
                [(cache_id(f, self.config), w) for f, w in zip(sent, worked, strict=True)], out
            )
            progress.advance(len(sent))
        todo = {h: f for h, f in self.todo.items() if h not in out}
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

    def _take(self, done: list[tuple[str, Worked]], out: dict[str, Extracted]) -> None:
        """Extracted files, by cache id: kept in `out` and reported, and their cache rows (the
        result, and its unit rows but "u:") queued for writing."""
        rows: dict[str, bytes] = {}
        for h, (result, blob, units) in done:
            out[h] = ((result, blob), units)
            if self.results.on_result is not None:
                self.results.on_result(h, result)
            rows[h] = blob
            rows.update((k, v) for k, v in units.items() if not k.startswith(UNIT))
        self.on_rows(rows)


def _cached(rows: dict[str, bytes], split: PackedSplit | None) -> Units:
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
