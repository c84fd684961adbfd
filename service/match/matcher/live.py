"""The matcher's index over the app's lifetime: built at start-up, rebuilt after each ingest.

Every completed snapshot bumps the database's `generation`. Requests check it at most once per
`refresh_seconds`; when it changed, one background thread builds a new index while requests keep
using the old one, and the new one replaces it with a single reference assignment (atomic in
Python), so no request waits for a rebuild or sees a half-built index.

The matcher stays free of the database: how to read the generation and load an index is handed
in (`errkb.service.read.matches.live_index` wires the match queries).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from errkb.service.match.matcher.index import MatchIndex

log = logging.getLogger(__name__)


class LiveIndex:
    """The current `MatchIndex` of one database, refreshed when its generation changes."""

    def __init__(
        self,
        engine: Any,
        *,
        loader: Callable[[Any], MatchIndex],
        generation: Callable[[Any], str],
        refresh_seconds: float = 2.0,
    ) -> None:
        self._engine = engine
        self._loader = loader
        self._generation = generation
        self._refresh_seconds = refresh_seconds
        self._index = loader(engine)
        self._checked = time.monotonic()
        self._lock = threading.Lock()
        self._builder: threading.Thread | None = None

    @property
    def index(self) -> MatchIndex:
        """The index in use right now (never blocks)."""
        return self._index

    def current(self) -> MatchIndex:
        """The index to answer a request with, starting a rebuild if the database moved on."""
        now = time.monotonic()
        if now - self._checked >= self._refresh_seconds:
            self._checked = now
            self._maybe_rebuild()
        return self._index

    def _maybe_rebuild(self) -> None:
        generation = self._generation(self._engine)
        if generation == self._index.generation:
            return
        with self._lock:
            if self._builder is not None and self._builder.is_alive():
                return
            self._builder = threading.Thread(target=self._rebuild, name="matcher-rebuild")
            self._builder.daemon = True
            self._builder.start()

    def _rebuild(self) -> None:
        try:
            fresh = self._loader(self._engine)
        except Exception:  # keep serving the old index; the next check retries
            log.exception("matcher index rebuild failed")
            return
        self._index = fresh

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a rebuild in progress, if any (for the CLI and tests)."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
