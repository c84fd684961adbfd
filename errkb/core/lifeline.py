"""Child processes that end with the process that started them, however it dies.

A pool's worker blocked on its task queue never notices its parent is gone (SIGKILL leaves no
chance to clean up), and it keeps the pool's helpers (forkserver, resource tracker) alive with
it. `exit_with(pid)`, called in the worker, ends the worker as soon as `pid` has exited.
"""

from __future__ import annotations

import os
import select
import threading
import time


def exit_with(pid: int) -> None:
    """Start a daemon thread that ends this process once process `pid` has exited."""
    try:
        fd: int | None = os.pidfd_open(pid)  # Linux >= 5.3: readable when the process exits
    except (AttributeError, OSError):  # no pidfd here, or `pid` already gone
        fd = None
    threading.Thread(target=_wait_then_exit, args=(pid, fd), daemon=True).start()


def _wait_then_exit(pid: int, fd: int | None) -> None:
    if fd is not None:
        select.select([fd], [], [])
    else:
        while _alive(pid):
            time.sleep(0.5)
    os._exit(1)  # nothing to clean up: results go to the parent, which is gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid now belongs to another user's process: ours is gone
        return False
    return True
