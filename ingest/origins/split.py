"""Tracing many sites on two cores: the sites of a snapshot's second half of files traced in a
forked copy of this process (it inherits the snapshot's index as it stands, nothing is sent to it)
while this process traces the first half.

The halves are contiguous runs of files in the sites' own order, so each half traces its sites
in the order one process would. A trace does not depend on what other sites were traced before
it (`trace.Walk._remembered` replays what it remembers as running it would), so the origins are
the ones one process finds. Where `fork` is not available, on one core, or for a few sites, one
process traces them all; so it does when the forked copy fails.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection

from errkb.core.lifeline import exit_with
from errkb.core.origin import Origin
from errkb.core.records import Site

SPLIT_SITES = 1_500  # fewer sites than this are traced in this process alone

Trace = Callable[[Site], Origin | None]


def traced(
    sites: Sequence[Site],
    trace: Trace,
    in_helper: Callable[[], None] = lambda: None,
    started: Callable[[], None] = lambda: None,
) -> list[Origin | None]:
    """`trace` of every site, in order, on two cores when it pays. `in_helper` runs first in the
    forked copy (to let go of what must not be shared across a fork, such as a database
    connection). `started` runs here once the copy is forked, or at once when there is none:
    threads the caller starts there (the next snapshot read ahead) are never forked."""
    cut = _cut(sites)
    if cut is None:
        started()
        return [trace(s) for s in sites]
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    helper = context.Process(target=_trace_into, args=(sites[cut:], trace, in_helper, send))
    helper.start()
    send.close()
    try:
        started()
        first = [trace(s) for s in sites[:cut]]
        second = _received(receive)
    except BaseException:  # Ctrl-C or an error here: the helper's half is wanted no more
        helper.terminate()
        raise
    finally:
        receive.close()
        helper.join()
    if second is None or len(second) != len(sites) - cut:
        second = [trace(s) for s in sites[cut:]]
    return first + second


def _received(receive: Connection) -> list[Origin | None] | None:
    """The helper's origins; None when it died (its half is then traced here)."""
    try:
        origins: list[Origin | None] = pickle.loads(receive.recv_bytes())
    except (EOFError, OSError, pickle.UnpicklingError):
        return None
    return origins


def _cut(sites: Sequence[Site]) -> int | None:
    """Where the second half starts: the first site of a file at or after the middle; None
    when one process traces them all."""
    if len(sites) < SPLIT_SITES or (os.cpu_count() or 1) < 2:
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    if multiprocessing.current_process().daemon:  # a daemon may start no process
        return None
    middle = len(sites) // 2
    for i in range(middle, len(sites)):
        if sites[i].path != sites[i - 1].path:
            return i
    return None


def _trace_into(
    sites: Sequence[Site], trace: Trace, in_helper: Callable[[], None], out: Connection
) -> None:
    """The forked helper: trace its half and send the origins back (or end with its parent,
    however that dies)."""
    exit_with(os.getppid())
    try:
        in_helper()
        out.send_bytes(pickle.dumps([trace(s) for s in sites], pickle.HIGHEST_PROTOCOL))
    finally:
        out.close()
