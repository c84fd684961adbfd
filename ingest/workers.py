"""Work that runs in parse processes, and the lazily started pool that runs it.

Worker processes import only this module and the pure core (extraction, flag links), never the
store: they are started by forkserver from a clean interpreter that preloads this module.

A worker exits as soon as the ingest process that started it is gone, however it died (SIGKILL
included): otherwise the workers, blocked on a queue whose write end they hold themselves, would
keep the forkserver and the resource tracker alive forever.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar

from errkb.core.lifeline import exit_with
from errkb.core.priority import lower_priority
from errkb.core.records import ExtractConfig, FileResult
from errkb.core.spawn import main_hidden
from errkb.ingest.extract import extract_file
from errkb.ingest.extract.incremental import extract_by_units
from errkb.ingest.extract.unit_keys import Split, split_file
from errkb.ingest.filecache import encode_result

T = TypeVar("T")
R = TypeVar("R")


class PackedSplit(NamedTuple):
    """A file's `Split` as `split_chunk` returns it: the unit keys to look up, and the split
    itself pickled. The main process reads only the keys and hands the bytes back to a worker
    (`extract_chunk`), so the split's many small objects are decoded once, where they are used.
    """

    lookups: list[str]
    split: bytes


def extract_chunk(
    chunk: list[tuple[str, bytes, dict[str, bytes], bytes | None]], config: ExtractConfig
) -> list[tuple[FileResult, bytes, dict[str, bytes]]]:
    """Extract each (path, bytes, cached unit rows, packed split) in the worker: the result,
    encoded for the file cache, and the new function-unit cache rows
    (`ingest.extract.incremental`)."""
    out = []
    for path, data, cached, packed in chunk:
        split: Split | None = pickle.loads(packed) if packed is not None else None
        by_units = extract_by_units(data, path, config, cached, split)
        result, rows = by_units if by_units is not None else (extract_file(data, path, config), {})
        out.append((result, encode_result(result), rows))
    _collect()
    return out


def split_chunk(chunk: list[tuple[str, bytes]], config: ExtractConfig) -> list[PackedSplit | None]:
    """Each (path, bytes) split into function units, whose keys are looked up before extracting;
    None for a file not extracted by units."""
    out: list[PackedSplit | None] = []
    for path, data in chunk:
        split = split_file(data, path, config)
        out.append(None if split is None else PackedSplit(split.lookups, pickle.dumps(split, 5)))
    return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off for a block (restored after): ingesting makes few reference cycles,
    while it holds many objects (file bytes, results, rows), each of which every full
    collection walks; the garbage left is collected after the block (`bench/ingest.py` shows
    the cost)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _ready() -> None:
    """A task that does nothing: submitting it makes the pool start its processes."""


_in_worker = False  # set in worker processes only


def _init_worker(parent_pid: int, nice: int) -> None:
    global _in_worker
    _in_worker = True
    exit_with(parent_pid)
    # Ctrl-C reaches the whole process group: the ingest process ends its pools itself (at once,
    # `close(cancel=True)`), so an idle worker must not print its own KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lower_priority(nice)  # parsing is batch work: the server on the same machine comes first
    # Syntax trees are acyclic, yet building them makes the cyclic GC scan the growing heap over
    # and over (~10% of parse time). Workers collect once per chunk instead (`_collect`), and
    # what the process holds from start-up is frozen out of those collections.
    gc.disable()
    gc.freeze()


def _collect() -> None:
    """In a worker (GC disabled by `_init_worker`), free any cyclic garbage the chunk left."""
    if _in_worker:  # never in the main process, whose heap holds the whole snapshot
        gc.collect()


class Workers:
    """A process pool started on first use; small jobs run inline, where starting costs more.

    `nice` is added to the workers' niceness (`ERRKB_WORKERS_NICE`).
    """

    def __init__(self, count: int = 0, *, nice: int = 0) -> None:
        self.count = count or os.cpu_count() or 1
        self.nice = nice
        self._pool: Executor | None = None
        self._closed = False  # a closed pool starts no processes again (a cancelled read ahead)

    def map(
        self, fn: Callable[..., R], chunks: Sequence[T], *args: Any, inline: bool = False
    ) -> Iterator[tuple[T, R]]:
        """(chunk, fn(chunk, *args)) for each chunk, in order."""
        if inline or self.count == 1 or len(chunks) < 2:
            for chunk in chunks:
                yield chunk, fn(chunk, *args)
            return
        pool = self._start()
        futures = [(chunk, pool.submit(fn, chunk, *args)) for chunk in chunks]
        for chunk, future in futures:
            yield chunk, future.result()

    def submit(self, fn: Callable[..., R], *args: Any) -> Future[R]:
        """fn(*args) in a worker process (started if need be)."""
        return self._start().submit(fn, *args)

    def warm(self) -> None:
        """Start the processes now, in the background, ahead of a `map` known to need them."""
        if self.count > 1:
            self._start()

    def _start(self) -> Executor:
        if self._closed:
            raise RuntimeError("the parse processes were closed")
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["errkb.ingest.workers"])
            self._pool = ProcessPoolExecutor(
                max_workers=self.count,
                mp_context=context,
                initializer=_init_worker,
                initargs=(os.getpid(), self.nice),
            )
            with main_hidden():  # the processes start on these first submits
                for _ in range(self.count):
                    self._pool.submit(_ready)
        return self._pool

    def close(self, *, cancel: bool = False) -> None:
        """Stop the processes, if any were started. `cancel` (an error or a signal unwinds)
        drops every task: those not begun, and those running, whose processes are ended at
        once rather than waited for (a chunk of a large file took half a minute on a busy
        machine). Their results were never stored, so nothing is lost."""
        self._closed = True
        pool, self._pool = self._pool, None  # closed once, whichever thread comes first
        if pool is None:
            return
        if cancel:
            # ProcessPoolExecutor ends its processes itself only from Python 3.14
            # (`terminate_workers`); before, the processes it holds are ended here.
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
        pool.shutdown(cancel_futures=cancel)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        # On an error or a signal (SIGTERM becomes SystemExit in the CLI) nobody wants the
        # chunks: neither the queued ones nor those running.
        self.close(cancel=exc_type is not None)
