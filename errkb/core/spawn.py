"""Starting worker processes without importing the parent's main module.

A process that multiprocessing starts (forkserver or spawn) first imports the parent's main
module, so that functions defined there can be unpickled. errkb's workers run only functions of
their own modules, while the main module is the `errkb` CLI, a benchmark or pytest: importing it
(Typer, Rich, SQLAlchemy, pydantic, ...) would cost each worker, and spawn would run a script's
top level again. The ingest workers and the entry-doc builders both start their processes
under `main_hidden`.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def main_hidden() -> Iterator[None]:
    """Processes started in this block see an empty main module in place of the parent's."""
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main
