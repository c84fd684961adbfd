"""The entry of one error: its stored doc when one is current, else built now.

`errkb ingest` stores every entry's default view (`service.entries.docs`), keyed by the
knowledge base's content key and by the settings that shape it (the public URL and the
preferred AI model). Reading it costs one row; building it costs about ten queries and the
knowledge derivation. This is the one place that chooses between the two, so the JSON route,
the page and the CLI read the same bytes under the same settings.
"""

from __future__ import annotations

from pydantic import ValidationError

from errkb.core.dictionaries import unpack_stored
from errkb.core.packed import dictionary_of, is_known, unpack
from errkb.core.settings import Settings
from errkb.service.entries.ai import enrich
from errkb.service.entries.build import build_entry
from errkb.service.entries.docs import settings_variant
from errkb.service.entries.queries import doc_body, doc_body_direct
from errkb.service.entries.schemas import AiExplanationOut, Entry
from errkb.service.entries.served import served_entry_json
from errkb.service.queries import DbEngine, DbSession

__all__ = [
    "AiExplanationOut",
    "Entry",
    "ai_explanation",
    "entry",
    "entry_json",
    "relative_entry",
    "stored_entry",
    "stored_entry_json",
    "stored_json_now",
    "stored_json_on_loop",
]


def stored_entry_json(session: DbSession, error_id: str, key: str, variant: str) -> bytes | None:
    """The entry's JSON from its doc, if that was built under `key` and `variant`."""
    body = doc_body(session, error_id, key, variant)
    return unpack_stored(session, body) if body is not None else None


def stored_json_now(
    engine: DbEngine, error_id: str, key: str, settings: Settings | None
) -> bytes | None:
    """The default view's stored JSON in one cursor read, without a session, when this process
    knows its dictionary already; None sends the caller to `entry_json` / `entry`, which load
    the dictionary or build the entry.

    Each server process reads every entry once this way before its cache holds it; through the
    ORM that read cost about 0.6 ms of CPU, most of it building the statement (profiled).
    """
    body = doc_body_direct(engine, error_id, key, settings_variant(settings))
    if body is None or not is_known(dictionary_of(body)):
        return None
    return unpack(body)


def stored_json_on_loop(
    engine: DbEngine, error_id: str, key: str, settings: Settings | None
) -> bytes | None:
    """`stored_json_now` where the database is a local file (SQLite): a row and a decompression,
    cheaper than the hop to a worker thread, so the event loop may read it. None on PostgreSQL,
    where the read is a network round trip and stays off the loop."""
    if engine.dialect.name != "sqlite":
        return None
    return stored_json_now(engine, error_id, key, settings)


def entry_json(
    session: DbSession,
    error_id: str,
    *,
    key: str | None,
    snapshot: str | None = None,
    settings: Settings | None = None,
) -> bytes:
    """The entry's JSON as served: from its doc when current under `key`, else built now.

    `settings` None stands for relative URLs and any model's AI prose, as in the export."""
    if snapshot is None and key is not None:  # the default view: its doc, stored if missing
        return served_entry_json(session, error_id, key, settings)
    built = build_entry(session, error_id, snapshot=snapshot, settings=settings)
    return built.model_dump_json().encode()


def entry(
    session: DbSession,
    error_id: str,
    *,
    key: str | None,
    snapshot: str | None = None,
    settings: Settings | None = None,
) -> Entry:
    """The entry of one error; `snapshot` picks the occurrences shown in full (default newest)."""
    if snapshot is None and key is not None:  # the default view: its doc, stored if missing
        parsed = stored_entry(served_entry_json(session, error_id, key, settings))
        if parsed is not None:  # None: a doc an older errkb built in another shape
            return parsed
    return build_entry(session, error_id, snapshot=snapshot, settings=settings)


def relative_entry(session: DbSession, error_id: str, *, key: str) -> Entry:
    """The default view with relative links and any model's AI prose, as the static export
    writes it: its stored doc when one is current under `key`, else built now (and not stored:
    an export only reads). The doc is the one a server with no public URL serves."""
    stored = stored_entry_json(session, error_id, key, settings_variant(None))
    parsed = stored_entry(stored) if stored is not None else None
    return parsed if parsed is not None else build_entry(session, error_id)


def stored_entry(stored: bytes) -> Entry | None:
    """A stored doc as an Entry; None for a doc an older errkb built in another shape (the
    caller builds the entry instead: a page must not fail because of an upgrade)."""
    try:
        return Entry.model_validate_json(stored)
    except ValidationError:
        return None


def ai_explanation(
    session: DbSession, error_id: str, settings: Settings, *, refresh: bool = False
) -> AiExplanationOut:
    """The language model's prose for an entry: cached per model, else asked now and stored.

    The one question answered by asking: the answer is kept beside the derived entry (never in
    place of it), so every later read of the entry shows it."""
    built = build_entry(session, error_id, settings=settings)
    return enrich(session, built, settings, refresh=refresh)
