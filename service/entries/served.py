"""An entry's default view as served: its stored doc when current, else built now and stored.

The read side (`errkb.service.read.entries`) calls `served_entry_json` for the JSON route, the
pages, the CLI and the MCP server: a doc out of date (or missing, or left for later by a build:
see `errkb.service.docstore.plan`) costs one build on its first request, and the doc stored
then serves the next ones. A doc is stored only if no ingest committed while it was built.
"""

from __future__ import annotations

import logging
import threading

from errkb.core.dictionaries import unpack_stored
from errkb.core.packed import Packer
from errkb.core.settings import Settings
from errkb.service.docstore.inputs import doc_inputs, related_ids
from errkb.service.docstore.plan import entry_own_inputs
from errkb.service.docstore.queries import error_titles, try_write_doc
from errkb.service.docstore.workers import Built
from errkb.service.entries.build import build_entry
from errkb.service.entries.docs import settings_variant, stored_dictionary
from errkb.service.entries.queries import doc_body
from errkb.service.queries import DbSession, session_kb_key

log = logging.getLogger("errkb.docs")


def stored_entry_json(session: DbSession, error_id: str, key: str, variant: str) -> bytes | None:
    """The entry's JSON from its doc, if that was built under `key` and `variant`."""
    body = doc_body(session, error_id, key, variant)
    return unpack_stored(session, body) if body is not None else None


def served_entry_json(
    session: DbSession, error_id: str, key: str, settings: Settings | None, *, store: bool = True
) -> bytes:
    """The default view's JSON: its doc when current, else built now and stored for next time."""
    variant = settings_variant(settings)
    stored = stored_entry_json(session, error_id, key, variant)
    if stored is not None:
        return stored
    entry = build_entry(session, error_id, settings=settings)
    raw = entry.model_dump_json().encode()
    related = ",".join(r.id for r in entry.related)
    if not store:
        return raw
    _store_doc(session, (error_id, raw, related), key, variant)
    return raw


_packers = threading.local()  # a Packer per thread and dictionary: they are not shareable


def _store_doc(session: DbSession, built: Built, key: str, variant: str) -> None:
    """Store one doc built on demand, unless an ingest committed while it was built."""
    if session_kb_key(session) != key:
        return
    error_id, raw, related = built
    ids = related_ids(related)
    titles = error_titles(session, set(ids))
    own, stable = entry_own_inputs(session, error_id, variant)
    inputs, stable = doc_inputs(own, ids, titles), doc_inputs(stable, ids, titles)
    trained = stored_dictionary(session)
    dict_id = trained.id if trained is not None else 0
    packers: dict[int, Packer] = getattr(_packers, "by_id", None) or {}
    _packers.by_id = packers
    if dict_id not in packers:
        packers[dict_id] = Packer(trained)
    body = packers[dict_id].pack(raw)
    refused = try_write_doc(session, key, variant, (error_id, body, inputs, stable, related))
    if refused is not None:  # served all the same; the next build stores it
        log.info("entry %s served but not stored: %s", error_id, refused)
