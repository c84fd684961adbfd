"""The results of one snapshot's files as they become known, cached ones decoded lazily.

Decoding cached results costs real time on a big snapshot, so the large ones are decoded while
the main process would otherwise wait for the workers (`decode_until`); the few distinct small
ones (early statuses) are decoded at once, once each.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from errkb.core.records import FileResult
from errkb.ingest.filecache import decode_result

SMALL_BLOB = 128  # cached results this small (early statuses) are decoded at once, once each


class ResultSet:
    """Results by cache id, each reported to `on_result` as it becomes known."""

    def __init__(self, on_result: Callable[[str, FileResult], None] | None = None) -> None:
        self.results: dict[str, FileResult] = {}
        self.on_result = on_result
        self._small: dict[bytes, FileResult] = {}  # decoded small blobs, by blob
        self._later: dict[str, bytes] = {}  # cached results not decoded yet

    def put(self, h: str, result: FileResult) -> None:
        """A result, now known."""
        self.results[h] = result
        if self.on_result is not None:
            self.on_result(h, result)

    def put_early(self, h: str, result: FileResult) -> None:
        """A result decided before any parse (prefiltered, too big...): kept, never reported."""
        self.results[h] = result

    def put_cached(self, h: str, blob: bytes) -> None:
        """A cached result: small ones decoded now, the others left for `decode_until`."""
        if len(blob) > SMALL_BLOB:
            self._later[h] = blob
            return
        if (result := self._small.get(blob)) is None:
            result = self._small[blob] = decode_result(blob)
        self.put(h, result)

    def decode_until(self, future: Future[Any] | None = None) -> None:
        """Decode deferred cached results until `future` is done (all of them without one)."""
        later = self._later
        while later and (future is None or not future.done()):
            h, blob = later.popitem()
            self.put(h, decode_result(blob))
