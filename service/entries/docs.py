"""Entry docs: each error's entry JSON stored, so a first read is a row; rebuilt only when needed.

An entry is derived by the read side (about ten queries and the knowledge derivation, 20-50 ms).
`errkb ingest` ends by building the docs whose content changed (`docstore.plan`: a new release
changes the content of the entries it adds, moves or drops, not the whole history), in worker
processes, and storing each compressed in `entry_docs` with the content key it was built under
and the hashes of its inputs. The docs whose inputs held are made current under the new key at
once. The docs out of date only because the new release raises their error from the same code
as the one before did (one more version in their lists, perhaps shifted lines) are left, with
`defer`, to their first request and to `errkb docs` (which `errkb serve` starts in the
background when docs are out of date).

A server answers a first request for an entry from its row when the row's key is the current
one, and otherwise builds the entry and stores it (`served.served_entry_json`): a doc is never
served stale, and a missing one costs one build, once.

A chunk is written only if the content key did not move while it was built (generations only
grow, and each is committed with its data), so a doc never mixes two ingests.

Entries of one knowledge base repeat each other (field names, sentences, paths, snapshot names),
so the docs are packed with a zstd dictionary (`errkb.core.packed`), stored beside them. It is
trained on the first docs of a full build (the first one, or `force`), and later builds pack
with it; a full build then deletes the dictionaries of earlier ones (a reader that meets a doc
whose dictionary is gone treats it as missing).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.dictionaries import drop_dictionaries_except, store_dictionary
from errkb.core.packed import Packer, Trained, register, train
from errkb.core.settings import Settings
from errkb.service.docstore import inputs
from errkb.service.docstore import workers as doc_workers
from errkb.service.docstore.inputs import doc_inputs, related_ids
from errkb.service.docstore.plan import CHECKED, DocPlan, plan_docs
from errkb.service.docstore.queries import (
    DocRow,
    doc_count,
    drop_docs_of,
    forget_inputs,
    meta_value,
    newest_dictionary,
    rekey_current,
    set_meta,
    set_stable,
    write_built_docs,
)
from errkb.service.docstore.workers import Built, built_chunks, chunks
from errkb.service.entries.build import build_entry
from errkb.service.queries import DbSession, kb_key

log = logging.getLogger("errkb.docs")
LAST_BUILD = "entry_docs_build"  # meta: what the last build did, as JSON (for `errkb status`)

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
    kept: int = 0  # docs whose inputs held: made current without a build
    dropped: int = 0  # docs of errors that lost their entry
    deferred: int = 0  # docs out of date only by their versions and lines, left for later


class _DocPacker:
    """Packs the docs of one build with the stored dictionary; without one (a first or forced
    build), the first `TRAIN_ON` docs wait while a dictionary is trained on them."""

    def __init__(self, sessions: Callable[[], DbSession], trained: Trained | None) -> None:
        self._sessions = sessions
        self._waiting: list[Built] = []
        self.packer: Packer | None = Packer(trained) if trained is not None else None
        self.trained = False  # a dictionary was trained by this build

    def add(self, rows: list[Built]) -> list[Built]:
        """The rows ready to be written, packed (none while the training sample fills)."""
        if self.packer is None:
            self._waiting += rows
            if len(self._waiting) < TRAIN_ON:
                return []
            return self.flush()
        return [(i, self.packer.pack(raw), rel) for i, raw, rel in rows]

    def flush(self) -> list[Built]:
        """Train on what waits (if not done yet) and return it packed."""
        if self.packer is None:
            trained = train([raw for _, raw, _ in self._waiting])
            if trained is not None:
                with self._sessions() as session:
                    if not store_dictionary(session, PURPOSE, trained):
                        trained = None
                    session.commit()
            self.packer = Packer(trained)
            self.trained = trained is not None
        rows, self._waiting = self._waiting, []
        return [(i, self.packer.pack(raw), rel) for i, raw, rel in rows]


def stored_dictionary(session: DbSession) -> Trained | None:
    """The dictionary new docs are packed with, registered for reading, if one is stored."""
    trained = newest_dictionary(session, PURPOSE)
    if trained is not None:
        register(trained.id, trained.data)
    return trained


def materialize_entries(
    settings: Settings,
    *,
    processes: int = 0,
    force: bool = False,
    defer: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Materialized:
    """Build and store the docs whose inputs changed (all with `force`, retraining the
    dictionary), and make the others current under the content key; with `defer`, leave the
    docs whose only change is a longer version list (see `docstore.plan`) out of date."""
    started = time.perf_counter()
    engine = engine_from_settings(settings)
    sessions = session_factory(engine)
    variant = settings_variant(settings)
    try:
        key = kb_key(engine)
        with sessions() as session:
            current = None if force else _current_since_last_build(session, key, variant)
        if current is not None:  # nothing an entry reads has changed: no plan to make
            return Materialized(0, 0, 0, time.perf_counter() - started, True, kept=current)
        with sessions() as session:
            plan = plan_docs(session, variant, force=force)
            rekey_current(session, plan.keep, key)  # served again at once
            set_stable(session, plan.restable)
            forget_inputs(session, plan.unheld)
            session.commit()
            trained = None if force else stored_dictionary(session)
        deferred = len(plan.later) if defer else 0
        if not defer:
            plan.rebuild = sorted(plan.rebuild + plan.later)
        if not plan.rebuild and not plan.drop:
            seconds = time.perf_counter() - started
            done = Materialized(0, 0, 0, seconds, not deferred, 0, len(plan.keep), 0, deferred)
            _finish(sessions, key, variant, plan, done, None)
            return done
        if progress is not None:
            progress(0, len(plan.rebuild))
        packer = _DocPacker(sessions, trained)
        entries, packed, raw, abandoned = _build(
            settings, processes, key, plan, sessions, packer, progress
        )
        done = Materialized(
            entries,
            packed,
            raw,
            time.perf_counter() - started,
            abandoned=abandoned,
            kept=len(plan.keep),
            dropped=len(plan.drop),
            deferred=deferred,
        )
        # A full build trained a dictionary that every doc now uses: the older ones can go.
        trained_for_all = packer.packer if not plan.keep and packer.trained else None
        _finish(
            sessions, key, variant, plan, done, trained_for_all.dict_id if trained_for_all else None
        )
        return done
    finally:
        engine.dispose()


def _current_since_last_build(session: DbSession, key: str, variant: str) -> int | None:
    """The number of docs, when the last build was complete under this content key, knowledge
    code and settings and every doc it left is still there; else None.

    Every input of a doc is in the database, whose content key moves with each commit that
    changes one (an ingest, `errkb explain`), or in the code and settings the build records. So
    a build right after an unchanged ingest has nothing to do, and planning it (hashing every
    occurrence of the history) took 6 s on the whole sglang history."""
    last = json.loads(meta_value(session, LAST_BUILD) or "{}")
    if not (
        last.get("complete")
        and last.get("key") == key
        and last.get("code") == inputs.knowledge_version()
        and last.get("variant") == variant
    ):
        return None
    held = int(last.get("rebuilt", 0)) + int(last.get("kept", 0))
    return held if doc_count(session, key, variant) == held else None


def _build(
    settings: Settings,
    processes: int,
    key: str,
    plan: DocPlan,
    sessions: Callable[[], DbSession],
    packer: _DocPacker,
    progress: Callable[[int, int], None] | None,
) -> tuple[int, int, int, int]:
    """Build the plan's docs in chunks; (docs written, bytes stored, JSON bytes, chunks left)."""
    entries = packed = raw = abandoned = done = 0

    def write(rows: list[Built]) -> None:
        nonlocal entries, packed
        if rows:
            with sessions() as session:
                write_built_docs(session, key, settings_variant(settings), _with_inputs(rows, plan))
                session.commit()
            entries += len(rows)
            packed += sum(len(body) for _, body, _ in rows)

    for rows in built_chunks(settings, processes or os.cpu_count() or 1, key, chunks(plan.rebuild)):
        if rows is None:
            abandoned += 1
        else:
            raw += sum(len(body) for _, body, _ in rows)
            done += len(rows)
            write(packer.add(rows))
        if progress is not None:
            progress(done, len(plan.rebuild))
    write(packer.flush())
    return entries, packed, raw, abandoned


def _with_inputs(rows: list[Built], plan: DocPlan) -> list[DocRow]:
    """The rows with the inputs hashes each doc was built from."""
    out = []
    for error_id, body, related in rows:
        ids = related_ids(related)
        inputs = doc_inputs(plan.own[error_id], ids, plan.titles)
        out.append(
            (error_id, body, inputs, doc_inputs(plan.stable[error_id], ids, plan.titles), related)
        )
    return out


def _finish(
    sessions: Callable[[], DbSession],
    key: str,
    variant: str,
    plan: DocPlan,
    done: Materialized,
    dictionary: int | None,
) -> None:
    """Record the build; when it is complete and current, drop what no doc needs any more."""
    report = {
        "rebuilt": done.entries,
        "kept": done.kept,
        "deferred": done.deferred,
        "seconds": round(done.seconds, 3),
        "key": key,
        "complete": not done.abandoned and not done.deferred,
        "code": inputs.knowledge_version(),
        "variant": variant,
    }
    with sessions() as session:
        set_meta(session, LAST_BUILD, json.dumps(report))
        if (
            doc_workers.kb_key_of(session) == key and not done.abandoned
        ):  # else a newer build owns it
            drop_docs_of(session, plan.drop)
            set_meta(session, CHECKED, str(plan.newest_snapshot))
            if dictionary is not None:
                drop_dictionaries_except(session, PURPOSE, dictionary)
        session.commit()
