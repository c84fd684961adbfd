"""Entry docs: every error's entry JSON built in bulk after an ingest, so a first read is a row.

An entry is derived by the read side (about ten queries and the knowledge derivation, 20-50 ms),
and an ingest changes nearly every entry of its repo (the timeline moves with each release). So
`errkb ingest` ends by building every entry once, in worker processes, and storing its JSON
compressed in `entry_docs` with the content key it was built under. A server answers a
first request for an entry from that row when the row's key is the current one, and otherwise
builds the entry itself (`errkb.service.read.entries`, the read path): a doc is never served
stale, and a missing one costs only a build.

A chunk is written only if the content key did not move while it was built (generations only
grow, and each is committed with its data), so a doc never mixes two ingests.

Entries of one knowledge base repeat each other (field names, sentences, paths, snapshot names),
so the docs are packed with a zstd dictionary trained on the first docs of the build itself
(`errkb.core.packed`), stored beside them. A complete build then deletes the docs of errors
that have no entry any more and the dictionaries of earlier builds; a reader that meets a doc
whose dictionary is gone treats it as missing.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.dictionaries import drop_dictionaries_except, store_dictionary
from errkb.core.errors import NotFound
from errkb.core.lifeline import exit_with
from errkb.core.packed import Packer, train
from errkb.core.priority import lower_priority
from errkb.core.settings import Settings
from errkb.core.spawn import main_hidden
from errkb.service.entries.build import build_entry
from errkb.service.entries.queries import (
    current_docs,
    drop_docs_except,
    entry_error_ids,
    write_docs,
)
from errkb.service.queries import DbSession, kb_key

CHUNK = 100  # entries per task: big enough to amortize a task, small enough to balance cores
TRAIN_ON = 1000  # docs the dictionary is trained on: more gained little
PURPOSE = "entry_docs"  # the dictionaries' purpose in `pack_dictionaries`


def doc_variant(public_url: str, llm_model: str) -> str:
    """What besides the data shapes a doc: the URLs' base and the preferred AI model."""
    raw = f"{public_url.rstrip('/')}\x1f{llm_model}".encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def settings_variant(settings: Settings | None) -> str:
    """The variant of entries built with `settings` (None: relative URLs, any model)."""
    if settings is None:
        return doc_variant("", "")
    return doc_variant(settings.public_url, settings.llm_model)


def entry_json(session: DbSession, error_id: str, settings: Settings | None) -> bytes:
    """The entry's JSON as served (its default view), built now."""
    return build_entry(session, error_id, settings=settings).model_dump_json().encode()


@dataclass(frozen=True)
class Materialized:
    """What one materialization did."""

    entries: int  # docs written
    compressed_bytes: int
    json_bytes: int
    seconds: float
    skipped: bool = False  # every doc was current already
    abandoned: int = 0  # chunks not written: an ingest committed while they were built


_worker: tuple[Callable[[], DbSession], Settings] | None = None


def _init_worker(settings: Settings, parent: int) -> None:
    global _worker
    exit_with(parent)
    lower_priority(settings.workers_nice)  # batch work, like parsing: a server comes first
    _worker = (session_factory(engine_from_settings(settings)), settings)


def _build_chunk(ids: list[str], key: str) -> list[tuple[str, bytes]] | None:
    """(id, JSON) per entry of `ids`, or None if the key moved meanwhile."""
    assert _worker is not None
    sessions, settings = _worker
    out = []
    with sessions() as session:
        for error_id in ids:
            try:
                raw = entry_json(session, error_id, settings)
            except NotFound:  # an error left without occurrences has no entry
                continue
            out.append((error_id, raw))
            session.expunge_all()  # rows of one entry are no use to the next
        if kb_key_of(session) != key:
            return None
    return out


def kb_key_of(session: DbSession) -> str:
    """The content key, read through a session's engine."""
    return kb_key(session.get_bind().engine)  # type: ignore[union-attr]


def _chunks(ids: list[str]) -> list[list[str]]:
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def _results(
    settings: Settings, processes: int, key: str, chunks: list[list[str]]
) -> Iterator[list[tuple[str, bytes]] | None]:
    """Each chunk built, in worker processes when more than one is asked for."""
    global _worker
    if processes <= 1 or len(chunks) < 2:
        engine = engine_from_settings(settings)
        _worker = (session_factory(engine), settings)
        try:
            for chunk in chunks:
                yield _build_chunk(chunk, key)
        finally:
            _worker = None
            engine.dispose()
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        processes, mp_context=context, initializer=_init_worker, initargs=(settings, os.getpid())
    ) as pool:
        with main_hidden():  # the processes start on these submits
            results = pool.map(_build_chunk, chunks, [key] * len(chunks))
        yield from results


class _DocPacker:
    """Packs the docs of one build: the first `TRAIN_ON` wait while a dictionary is trained on
    them, then every doc is packed with it as it comes."""

    def __init__(self, sessions: Callable[[], DbSession]) -> None:
        self._sessions = sessions
        self._waiting: list[tuple[str, bytes]] = []
        self.packer: Packer | None = None

    def add(self, rows: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
        """The rows ready to be written, packed (none while the training sample fills)."""
        if self.packer is None:
            self._waiting += rows
            if len(self._waiting) < TRAIN_ON:
                return []
            return self.flush()
        return [(i, self.packer.pack(raw)) for i, raw in rows]

    def flush(self) -> list[tuple[str, bytes]]:
        """Train on what waits (if not done yet) and return it packed."""
        if self.packer is None:
            trained = train([raw for _, raw in self._waiting])
            if trained is not None:
                with self._sessions() as session:
                    if not store_dictionary(session, PURPOSE, trained):
                        trained = None
                    session.commit()
            self.packer = Packer(trained)
        rows, self._waiting = self._waiting, []
        return [(i, self.packer.pack(raw)) for i, raw in rows]


def materialize_entries(
    settings: Settings,
    *,
    processes: int = 0,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Materialized:
    """Build and store every entry's doc under the current content key (skipped when current)."""
    started = time.perf_counter()
    engine = engine_from_settings(settings)
    sessions = session_factory(engine)
    variant = settings_variant(settings)
    try:
        key = kb_key(engine)
        with sessions() as session:
            ids = entry_error_ids(session)
            if not force and current_docs(session, key, variant) == len(ids):
                return Materialized(len(ids), 0, 0, time.perf_counter() - started, skipped=True)
        chunks = _chunks(ids)
        packer = _DocPacker(sessions)
        entries = packed = raw = abandoned = done = 0

        def write(rows: list[tuple[str, bytes]]) -> None:
            nonlocal entries, packed
            if rows:
                with sessions() as session:
                    write_docs(session, key, variant, rows)
                    session.commit()
                entries += len(rows)
                packed += sum(len(body) for _, body in rows)

        for rows in _results(settings, processes or os.cpu_count() or 1, key, chunks):
            done += 1
            if rows is None:
                abandoned += 1
            else:
                raw += sum(len(body) for _, body in rows)
                write(packer.add(rows))
            if progress is not None:
                progress(done, len(chunks))
        write(packer.flush())
        if not abandoned and packer.packer is not None:
            with sessions() as session:  # every entry has its doc of this build now
                if kb_key_of(session) != key:  # a newer ingest's build owns what is stored
                    return Materialized(entries, packed, raw, time.perf_counter() - started)
                drop_docs_except(session, key, variant)
                drop_dictionaries_except(session, PURPOSE, packer.packer.dict_id)
                session.commit()
        return Materialized(entries, packed, raw, time.perf_counter() - started, False, abandoned)
    finally:
        engine.dispose()
