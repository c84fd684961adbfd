"""The extraction results of one snapshot's files, worked out while the files are read.

Each file is settled by the cheapest means that is exact: an archive member whose compressed
stream an earlier snapshot stored (its digest maps to a content hash whose result is cached) is
not even inflated (`known`); then the byte prefilter, then the file cache (by content hash), then
extraction in the worker processes, function by function where the file's earlier versions left
cached units (`ingest.extract.incremental`). Three parts keep the state, each named for its job:
`CacheLookup` (what the file cache knows), `WorkerDispatch` (what the workers are given and give
back) and `ResultSet` (the results, cached ones decoded while the workers parse).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import Engine

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest.cache_lookup import CacheLookup, cache_id
from errkb.ingest.dispatch import WorkerDispatch
from errkb.ingest.extract import EXTRACTOR_VERSION
from errkb.ingest.extract.decode import EARLY_STATUSES, rejected
from errkb.ingest.extract.unit_keys import UNIT
from errkb.ingest.filecache import extractor_key
from errkb.ingest.progress import Progress
from errkb.ingest.result_set import ResultSet
from errkb.ingest.sources.base import SourceFile
from errkb.ingest.workers import Workers

STREAM_BYTES = 8_000_000  # a snapshot this big will use the processes: start them while reading
LOOKUP_FILES = 400  # files per cache lookup while streaming


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
        self.files: list[SourceFile] = []
        self.hits = 0
        self.parsed = 0
        self.fresh_ids: frozenset[str] = frozenset()  # the contents parsed (not cached) now
        self._set = ResultSet(on_result)
        key = extractor_key(EXTRACTOR_VERSION, config)
        self._cache = CacheLookup(engine, key, config, self._set)
        # New cache rows are written while the workers parse, except the function-unit rows
        # ("u:"), whose value depends on which file holding the unit gives it: those are chosen
        # in `finish`, the same whatever order the workers finish in, and written last.
        self._dispatch = WorkerDispatch(
            config, workers, self._cache, self._set, on_rows=self._cache.writer.put
        )
        self._workers = workers
        self._bytes = 0

    @property
    def results(self) -> dict[str, FileResult]:
        """Results by cache id (complete after `finish`)."""
        return self._set.results

    def known(self, members: Sequence[tuple[str, str]]) -> dict[str, str]:
        """What the source may leave unread (`ingest.sources.base.KnownFiles`)."""
        return self._cache.known(members)

    def add(self, f: SourceFile) -> None:
        """One file of the snapshot, as it is read."""
        self.files.append(f)
        if f.skip is not None:
            return
        h = cache_id(f, self.config)
        if f.known:  # settled by `known`, unread
            self._cache.known_ids.append(h)
            return
        self._cache.remember_stored(f)
        early = rejected(f.data, f.path, self.config)
        if early is not None:
            self._set.put_early(h, early)
            self._cache.remember_early(f, h, early)
            return
        self._cache.enqueue(h, f)
        self._bytes += len(f.data)
        dispatch = self._dispatch
        if not dispatch.streaming and self._bytes >= STREAM_BYTES and self._workers.count > 1:
            dispatch.streaming = True
            self._workers.warm()
        if dispatch.streaming and len(self._cache.pending) >= LOOKUP_FILES:
            dispatch.add_misses(self._cache.lookup())
            dispatch.send()
            dispatch.chain(wait=False)

    def finish(self, progress: Progress) -> dict[str, FileResult]:
        """Every file's result; the last new cache rows queued for writing (see `close`)."""
        dispatch = self._dispatch
        dispatch.add_misses(self._cache.lookup())
        if dispatch.streaming:
            dispatch.send()
        progress.phase("parsing", len(dispatch.todo))
        dispatch.chain()
        fresh = dispatch.extract_rest(dispatch.unit_rows(), progress)
        self._set.decode_until()
        rows: dict[str, bytes] = {}
        for h in sorted(fresh):  # a unit in several files: the same row whatever the order
            for k, v in fresh[h][1].items():
                if k.startswith(UNIT):
                    rows.setdefault(k, v)
        self._cache.writer.put(rows | self._cache.flush_stored())
        results = self._set.results
        results.update((h, r) for h, ((r, _), _) in fresh.items())
        self.fresh_ids = frozenset(fresh)
        self.parsed = sum(1 for (r, _), _ in fresh.values() if r.parsed)
        self.hits = sum(1 for h in self._cache.looked_up if h in self._cache.found) + sum(
            1 for h in self._cache.known_ids if results[h].status not in EARLY_STATUSES
        )
        return results

    def close(self) -> None:
        """Return once every new cache row is written (the last ones are queued by `finish`, so
        the caller links the sites meanwhile)."""
        self._cache.writer.close()
