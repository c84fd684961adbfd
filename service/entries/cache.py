"""Entries and entry pages computed once per knowledge-base version, not once per request.

Building an entry reads about ten queries and runs the knowledge derivation; the answer only
changes when an ingest (or `errkb explain`) moves the content key. So each process keeps the
serialized bytes of the entries it has served, keyed by (content key, what was asked), in an
LRU bounded in bytes. A request that sees a new key empties the cache first, so nothing built
under an older key is ever served again; the first request for an entry after an ingest builds
only that entry, never the whole knowledge base.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class EntryCache(Generic[V]):
    """Answers of one content key, least recently used dropped past `max_bytes`; each value
    weighs `size(value)` (its length, for the serialized bytes it usually holds)."""

    def __init__(self, max_bytes: int, size: Callable[[Any], int] = len) -> None:
        self._max_bytes = max_bytes
        self._size = size
        self._key = ""
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def _switch(self, key: str) -> None:
        if key != self._key:
            self._key = key
            self._items.clear()
            self._bytes = 0

    def get(self, key: str, item: Hashable) -> V | None:
        """The cached bytes of `item` under content key `key`, if any."""
        with self._lock:
            self._switch(key)
            value = self._items.get(item)
            if value is not None:
                self._items.move_to_end(item)
            return value

    def put(self, key: str, item: Hashable, value: V) -> None:
        """Keep `value` for `item` unless the content key has moved on meanwhile."""
        weight = self._size(value)
        if weight > self._max_bytes:
            return
        with self._lock:
            if key != self._key:
                return  # built under an older key (or a newer one not yet seen): don't keep it
            old = self._items.pop(item, None)
            self._bytes += weight - (self._size(old) if old is not None else 0)
            self._items[item] = value
            while self._bytes > self._max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= self._size(dropped)

    def get_or_build(self, key: str, item: Hashable, build: Callable[[], V]) -> V:
        """The cached bytes, or `build()`'s, kept for the next request."""
        value = self.get(key, item)
        if value is None:
            value = build()
            self.put(key, item, value)
        return value

    def __len__(self) -> int:
        return len(self._items)
