"""File-cache rows written by a background thread while a snapshot is still being parsed.

Each batch is its own short transaction (`store.write_cache`: insert-or-ignore, idempotent), so
rows written before a crash or a kill are kept, and a later run reuses them. The thread spends
most of its time in the database driver, which lets the main thread run meanwhile. Before a
batch is written its results are repacked with the knowledge base's trained dictionary
(`ingest.cache_packing`), which this thread trains and stores once enough results have passed.
"""

from __future__ import annotations

import queue
import threading

from sqlalchemy import Engine

from errkb.ingest import store
from errkb.ingest.cache_packing import PURPOSE, CachePacker


class CacheWriter:
    """Writes the batches given to `put`, in order, on one thread started at the first batch."""

    def __init__(self, engine: Engine, extractor: str, packer: CachePacker | None = None) -> None:
        self.engine = engine
        self.extractor = extractor
        self.packer = packer or CachePacker(None)
        self._queue: queue.SimpleQueue[dict[str, bytes] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def put(self, rows: dict[str, bytes]) -> None:
        """Queue rows to write (content-addressed: each key always has the same value)."""
        if not rows:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="errkb-cache", daemon=True)
            self._thread.start()
        self._queue.put(rows)

    def close(self) -> None:
        """Return once every queued row is written; raise the first write's error, if any."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        while (rows := self._queue.get()) is not None:
            if self._error is None:  # after a failure the rest is drained, not written
                try:
                    packed, trained = self.packer.repack(rows)
                    if trained is not None and not store.save_dictionary(
                        self.engine, PURPOSE, trained
                    ):
                        self.packer.disable()
                        packed = rows
                    store.write_cache(self.engine, self.extractor, packed)
                except BaseException as exc:  # handed to the thread that calls `close`
                    self._error = exc
