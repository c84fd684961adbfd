"""What the MCP tools read, and the one place they reach the read side.

The tools answer the same questions as the JSON API (an entry, the matches of a text, a search),
so they call the same functions with the same caches: an entry the API has served is not built
again for an agent, and a match runs in the same match processes. `Backing` holds what one
knowledge base needs (sessions, version tracker, entry cache, matcher); the HTTP app hands over
its own, and `errkb mcp` builds one for itself (`open_backing`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from sqlalchemy.exc import SQLAlchemyError

from errkb.core.db import (
    engine_from_settings,
    require_current_schema,
    session_factory,
    sqlite_path,
)
from errkb.core.errors import BadInput, ErrkbError, NotFound
from errkb.core.settings import Settings
from errkb.service.entries.cache import EntryCache
from errkb.service.read.browse import snapshot_labels
from errkb.service.read.entries import Entry, entry_json
from errkb.service.read.match_processes import MatchProcesses
from errkb.service.read.matches import MatchOut
from errkb.service.read.search import MAX_LIMIT, SearchResults, search
from errkb.service.read.status import EMPTY_KB, VersionTracker

__all__ = ["MAX_LIMIT", "Backing", "EmptyKnowledgeBase", "Reader", "open_backing"]


class EmptyKnowledgeBase(NotFound):
    """Nothing has been ingested: every question gets this one answer."""


class Unavailable(ErrkbError):
    """The knowledge base cannot be read (no such file, a schema behind): every question gets
    this one answer, so an agent can tell its user why."""

    status_code = 503


@dataclass
class Backing:
    """One knowledge base as a front end reads it: the same objects the HTTP app keeps."""

    settings: Settings
    sessions: Any  # sessionmaker
    versions: VersionTracker
    entries: EntryCache[bytes]
    matcher: MatchProcesses


def existing_database(settings: Settings) -> None:
    """Refuse a SQLite file that does not exist (`Unavailable`): a reader never creates one."""
    url = settings.resolved_database_url
    path = sqlite_path(url) if url.startswith("sqlite") else None
    if path is not None and not path.is_file():
        raise Unavailable(
            f"The knowledge base {path} does not exist: run `errkb ingest` to build it, or set "
            "ERRKB_DATABASE_URL to an existing one."
        )


@contextmanager
def open_backing(settings: Settings) -> Iterator[Backing]:
    """A backing of its own, for a process that is not the HTTP app (`errkb mcp`): it reads a
    knowledge base at the code's schema, and never creates or migrates one."""
    existing_database(settings)
    engine = engine_from_settings(settings)
    try:
        require_current_schema(engine)
        matcher = MatchProcesses(
            settings.resolved_database_url,
            refresh_seconds=settings.match_refresh_seconds,
            processes=settings.match_processes,
            nice=settings.match_nice,
            queue_limit=settings.match_queue,
            cache_dir=settings.cache_dir,
        )
        versions = VersionTracker(engine)
        try:
            yield Backing(
                settings=settings,
                sessions=session_factory(engine),
                versions=versions,
                entries=EntryCache[bytes](settings.entry_cache_mb << 20),
                matcher=matcher,
            )
        finally:
            matcher.close()
            versions.close()
    finally:
        engine.dispose()


class Reader:
    """The questions the tools ask, answered by the read side over one backing."""

    def __init__(self, backing: Backing) -> None:
        self.backing = backing
        self._labels: tuple[str, list[str]] = ("", [])  # (content key, labels) last read

    @property
    def settings(self) -> Settings:
        """The settings of the knowledge base read."""
        return self.backing.settings

    def versions(self) -> list[str]:
        """Every ingested snapshot's label, oldest first; refuses an empty knowledge base."""
        return self._labels_now()[1]

    def _labels_now(self) -> tuple[str, list[str]]:
        key = self.backing.versions.current().key
        if self._labels[0] != key:  # read once per ingest: the hot path asks on the event loop
            with self.backing.sessions() as session:
                self._labels = (key, snapshot_labels(session))
        labels = self._labels
        if not labels[1]:
            # The same sentence as the server's 404s and /healthz, as a sentence of its own.
            raise EmptyKnowledgeBase(EMPTY_KB[0].upper() + EMPTY_KB[1:] + ".")
        return labels

    def version_label(self, version: str | None) -> str | None:
        """The ingested label a version names: `v0.5.23` or ` 0.5.23 ` is `0.5.23` when that is
        ingested and the name as given is not, and `1` is `v1` (refusals: `check_version`)."""
        if version is None:
            return None
        labels = self._labels_now()[1]
        label = version.strip()
        if label not in labels and label[:1] in ("v", "V") and label[1:] in labels:
            label = label[1:]
        elif label not in labels and "v" + label in labels:
            label = "v" + label
        return label if label in labels else version

    def check_version(self, version: str | None) -> str:
        """The content key now, after refusing a version that was never ingested (naming the
        ones that were) and an empty knowledge base."""
        key, labels = self._labels_now()
        if version is not None and version not in labels:
            shown = ", ".join(labels[-12:])
            more = f" (and {len(labels) - 12} older)" if len(labels) > 12 else ""
            raise BadInput(
                f"Version {version!r} is not in the knowledge base. "
                f"Ingested versions: {shown}{more}."
            )
        return key

    def cached_entry(self, error_id: str, version: str | None = None) -> Entry | None:
        """The entry if either front end has it at hand (no database read), else None."""
        key = self.backing.versions.current().key
        body = self.backing.entries.get(key, ("json", error_id, version))
        return Entry.model_validate_json(body) if body is not None else None

    async def entry_now(self, error_id: str, version: str | None = None) -> Entry:
        """The entry: at hand on the event loop, as the JSON route does, else built in a thread."""
        entry = self.cached_entry(error_id, version)
        if entry is None:
            entry = await anyio.to_thread.run_sync(self.entry, error_id, version)
        return entry

    def entry(self, error_id: str, version: str | None = None) -> Entry:
        """The entry of one error, as `GET /api/errors/{id}?snapshot=` serves it."""
        key = self.backing.versions.current().key
        settings = self.backing.settings

        def build() -> bytes:
            with self.backing.sessions() as session:
                return entry_json(session, error_id, key=key, snapshot=version, settings=settings)

        # The same cache item as the JSON route's: an entry either front end built is shared.
        body = self.backing.entries.get_or_build(key, ("json", error_id, version), build)
        return Entry.model_validate_json(body)

    def warm(self) -> None:
        """Build one entry (the first a search lists), so that the first tool call finds the
        entry code imported and the database's pages read; a knowledge base that cannot answer
        is left for the tools to say so."""
        try:
            hits = self.search("", exception=None, flag=None, limit=1).items
            if hits:
                self.entry(hits[0].id)
        except (ErrkbError, SQLAlchemyError):
            return

    async def matches(self, text: str, limit: int) -> list[MatchOut]:
        """The errors a log or traceback shows, best first, as `POST /api/match` finds them."""
        matcher = self.backing.matcher
        with matcher.admitted():
            return await matcher.match(
                text.encode(), "text/plain", limit=limit, public_url=self.settings.public_url
            )

    def search(
        self, query: str, *, exception: str | None, flag: str | None, limit: int
    ) -> SearchResults:
        """The first page of `GET /api/errors?q=&flag=&exception=`, ranked the same way."""
        with self.backing.sessions() as session:
            return search(session, q=query, flag=flag, limit=limit, exception=exception)
