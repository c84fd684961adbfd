"""Reading and parsing the next snapshot while this one is traced and stored, so that an ingest of
many snapshots (a whole release history) keeps both cores busy.

An ingest runs in two halves (`pipeline.read_snapshot`, then `pipeline.store_snapshot`). Once a
snapshot's module facts are made, the rest of its trace, its links and its store run on this
process's core alone, while its parse processes wait; the next snapshot's read and parse used to
wait for all of it. Here the next one is read on a thread, its files parsed on processes of its
own, from the moment the trace needs its processes no more (`store_snapshot`'s `ready`).

The database ends the same as a serial ingest's: snapshots are stored one after the other, in
order, and the read touches nothing the trace keeps (the next snapshot's sites are traced after
this one's origins are kept, as before); this one's file-cache rows are all written before the
next one looks any up (see `pipeline.store_snapshot`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from errkb.core.errors import ErrkbError
from errkb.core.records import ExtractConfig
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import (
    Job,
    ReadSnapshot,
    SnapshotSummary,
    read_snapshot,
    store_snapshot,
)
from errkb.ingest.progress import Progress
from errkb.ingest.sources.base import Source
from errkb.ingest.workers import Workers, gc_paused

T = TypeVar("T")
# A source to ingest: its repo's configuration, how to extract, and how to open it.
Planned = tuple[RepoPin, ExtractConfig, Callable[[], Source]]
# What reading one planned source gave: the open source and its read (or its summary when it is
# stored already), or the error that made it fail.
Read = tuple[Source, ReadSnapshot | SnapshotSummary] | ErrkbError

STOP_SECONDS = 10.0  # how long `cancel` waits for the thread (it ends by itself, being a daemon)


class ReadAhead(Generic[T]):
    """`read(workers)` run on a thread from `start`, its value (or its error) given by `take`.

    Each read gets parse processes of its own (`workers()`), which `cancel` ends at once: a read
    left behind by Ctrl-C or an error stops at its next wait on them.
    """

    def __init__(
        self,
        read: Callable[[Workers], T],
        workers: Callable[[], Workers],
        drop: Callable[[T], None] = lambda _: None,
    ) -> None:
        self._read = read
        self._workers = workers
        self._drop = drop  # lets go of a value never taken (`cancel`)
        self._thread: threading.Thread | None = None
        self._current: Workers | None = None
        self._value: T | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        """Start the next read, unless one is started already."""
        if self._thread is not None:
            return
        self._current = self._workers()
        self._thread = threading.Thread(
            target=self._run, args=(self._current,), name="errkb-read-ahead", daemon=True
        )
        self._thread.start()

    def take(self) -> T:
        """The read's value (started now if it was not), once it is done; its error, if any."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        self._thread = self._current = None
        value, self._value = self._value, None
        error, self._error = self._error, None
        if error is not None:
            raise error
        return value  # type: ignore[return-value]

    def cancel(self) -> None:
        """Stop a read still running: its parse processes end at once; what it read is
        dropped (nothing of it was stored but file-cache rows, which are kept)."""
        thread, workers = self._thread, self._current
        self._thread = self._current = None
        if workers is not None:
            workers.close(cancel=True)
        if thread is None:
            return
        thread.join(STOP_SECONDS)
        value, self._value, self._error = self._value, None, None
        if not thread.is_alive() and value is not None:
            self._drop(value)

    def _run(self, workers: Workers) -> None:
        try:
            self._value = self._read(workers)
        except BaseException as exc:  # handed to `take`, in the thread that asked
            self._error = exc


def ingest_in_turn(
    planned: Iterable[Planned],
    job: Job,
    progress: Progress,
    summaries: list[SnapshotSummary],
    on_failure: Callable[[ErrkbError], None],
    beside: Progress | None = None,
) -> None:
    """Ingest the planned sources in order, each next one read while the one before is traced
    and stored. Each summary goes into `summaries` in the sources' order: its place is taken
    before the store, so what the caller adds meanwhile (releases skipped while the next source
    is planned) follows it. A source that fails goes to `on_failure`, and the rest go on.
    `beside` shows the read ahead's phases (default: `progress`)."""
    sources = iter(planned)
    ahead: ReadAhead[Read | None] = ReadAhead(
        lambda workers: _read_next(sources, job, beside or progress, workers),
        lambda: Workers(job.workers, nice=job.workers_nice),
        _drop,
    )
    # The cyclic GC is off throughout, as `pipeline.ingest_snapshot` keeps it off for one
    # snapshot (the read ahead always holds the next one). Once a snapshot is stored, the young
    # generations are collected: all that was made since the last time (the GC being off). The
    # old one, where the origin index's memory ends up, is not gone through each time: a full
    # collection took about a second late in a history (measured), a young one what it frees.
    with gc_paused():
        try:
            while (read := ahead.take()) is not None:
                if isinstance(read, ErrkbError):
                    on_failure(read)
                    continue
                source, snapshot = read
                try:
                    _store(snapshot, progress, summaries, ahead.start)
                except ErrkbError as exc:  # one bad source must not cost the others
                    on_failure(exc)
                finally:
                    source.close()
                del read, snapshot
                gc.collect(1)
        finally:
            ahead.cancel()


def _store(
    snapshot: ReadSnapshot | SnapshotSummary,
    progress: Progress,
    summaries: list[SnapshotSummary],
    ready: Callable[[], None],
) -> None:
    """Store a snapshot read (starting the next read at `ready`), its summary in `summaries`."""
    if isinstance(snapshot, SnapshotSummary):  # stored already
        summaries.append(snapshot)
        return
    summaries.append(snapshot.summary)  # filled in by the store
    try:
        store_snapshot(snapshot, progress, ready)
    except BaseException:
        del summaries[next(i for i, s in enumerate(summaries) if s is snapshot.summary)]
        raise


def _drop(read: Read | None) -> None:
    """Let go of a read never stored (the ingest stopped): its source, its cache writes."""
    if read is None or isinstance(read, ErrkbError):
        return
    source, snapshot = read
    try:
        if isinstance(snapshot, ReadSnapshot):
            snapshot.close(cancel=True)
    finally:
        source.close()


def _read_next(
    sources: Iterator[Planned], job: Job, progress: Progress, workers: Workers
) -> Read | None:
    """The next planned source opened and read on `workers` (on the read-ahead thread)."""
    planned = next(sources, None)
    if planned is None:
        return None
    repo, config, make_source = planned
    try:
        source = make_source()
    except ErrkbError as exc:
        return exc
    try:
        return source, read_snapshot(source, repo, config, job, progress, workers)
    except ErrkbError as exc:
        source.close()
        return exc
    except BaseException:
        source.close()
        raise
