"""glibc's allocator set for a long-running server, so that memory a request borrowed goes back.

Two of glibc malloc's defaults keep memory that a server has freed:
- its mmap threshold adapts: once a block above it has been freed (a 1 MiB request body), blocks
  up to that size come from the heap instead, where freed space is kept for reuse and seldom
  handed back to the system;
- each thread that allocates may get an arena of its own, up to 8 per core, and each keeps its
  own freed space: the thread pool that builds entries has 40 threads.
In a 30-minute soak (16 clients posting 1 MiB texts, browsing beside them, an ingest restarted),
the server processes grew 21% after their caches were full. Fixing the threshold at 128 KiB
(glibc's starting value) and the arenas at 2 per process stopped that growth (docs/figures.md).

Both are set with `mallopt` when a server or match process starts, unless the environment
already sets them (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`: the user's choice wins).
Elsewhere than glibc (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
M_ARENA_MAX = -8
MMAP_THRESHOLD = 128 * 1024
ARENA_MAX = 2


def tune_allocator() -> bool:
    """Set glibc's mmap threshold and arena count for this process; False when not glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    done = True
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        done = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and done
    if "MALLOC_ARENA_MAX" not in os.environ:
        done = mallopt(M_ARENA_MAX, ARENA_MAX) == 1 and done
    return done
