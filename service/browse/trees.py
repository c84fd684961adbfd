"""Module trees built once per content key, not once per module page.

A module page needs the whole tree (every file's path and errors, over every snapshot) for its
counts, and building it reads every distinct (path, error) pair: by far the most work of any
page, and all of it holding the GIL, so the server's event loop (health checks included) waits
while it runs. The tree changes only when an ingest moves the content key, so each process keeps
the trees of the current key, one per snapshot asked for, and builds each of them once: a
request that finds its tree being built waits for that build instead of starting another.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from errkb.service.browse.queries import ModuleTree

MAX_TREES = 8  # snapshots whose trees are kept at once; the label comes from the query string


class ModuleTrees:
    """The module trees of one content key, by snapshot label (None: every snapshot)."""

    def __init__(self, max_trees: int = MAX_TREES) -> None:
        self._max_trees = max_trees
        self._key = ""
        self._trees: OrderedDict[str | None, ModuleTree] = OrderedDict()
        self._lock = threading.Lock()  # held while building: one build at a time per process

    def get_or_build(
        self, key: str, snapshot: str | None, build: Callable[[], ModuleTree]
    ) -> ModuleTree:
        """The tree of `snapshot` under content key `key`, built by `build()` if not kept."""
        with self._lock:
            if key != self._key:
                self._key = key
                self._trees.clear()
            tree = self._trees.get(snapshot)
            if tree is None:
                tree = build()
                self._trees[snapshot] = tree
                if len(self._trees) > self._max_trees:
                    self._trees.popitem(last=False)
            else:
                self._trees.move_to_end(snapshot)
            return tree

    def __len__(self) -> int:
        return len(self._trees)
