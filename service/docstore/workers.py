"""The workers that build entry docs: one process per core, each with its own engine.

`docs.materialize_entries` hands them chunks of error ids; each chunk comes back as the built
entries, or None when an ingest committed while it was built (its docs would mix two ingests).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.errors import NotFound
from errkb.core.lifeline import exit_with
from errkb.core.priority import lower_priority
from errkb.core.settings import Settings
from errkb.core.spawn import main_hidden
from errkb.service.entries.build import build_entry
from errkb.service.entries.schemas import Entry
from errkb.service.queries import DbSession, kb_key

CHUNK = 100  # entries per task: big enough to amortize a task, small enough to balance cores


def _related(entry: Entry) -> str:
    return ",".join(r.id for r in entry.related)


_worker: tuple[Callable[[], DbSession], Settings] | None = None


def _init_worker(settings: Settings, parent: int) -> None:
    global _worker
    exit_with(parent)
    lower_priority(settings.workers_nice)  # batch work, like parsing: a server comes first
    _worker = (session_factory(engine_from_settings(settings)), settings)


Built = tuple[str, bytes, str]  # error id, entry JSON, related error ids


def _build_chunk(ids: list[str], key: str) -> list[Built] | None:
    """(id, JSON, related ids) per entry of `ids`, or None if the key moved meanwhile."""
    assert _worker is not None
    sessions, settings = _worker
    out = []
    with sessions() as session:
        for error_id in ids:
            try:
                entry = build_entry(session, error_id, settings=settings)
            except NotFound:  # an error left without occurrences has no entry
                continue
            out.append((error_id, entry.model_dump_json().encode(), _related(entry)))
        # The rows stay in the session for the chunk: the repo's snapshots are read once per
        # session (`queries.kept_rows`), and attaching them again for each entry cost 9%.
        if kb_key_of(session) != key:
            return None
    return out


def kb_key_of(session: DbSession) -> str:
    """The content key, read through a session's engine."""
    return kb_key(session.get_bind().engine)  # type: ignore[union-attr]


def chunks(ids: list[str]) -> list[list[str]]:
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def built_chunks(
    settings: Settings, processes: int, key: str, chunks: list[list[str]]
) -> Iterator[list[Built] | None]:
    """Each chunk built (None: abandoned), in worker processes when more than one is asked."""
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
