"""Lower CPU priority for batch work, so the server's requests get the cores first.

Matching a large body and parsing source files are long CPU-bound jobs; a health check or a
page is a few milliseconds of work that must not wait behind them. The processes that run the
long jobs make themselves nicer than the process that started them (`os.nice` adds to the
inherited niceness, which any process may do to itself), so the kernel's scheduler runs the
server first whenever both want a core, while the batch work still gets every idle cycle.
"""

from __future__ import annotations

import os


def lower_priority(increment: int) -> None:
    """Make this process `increment` steps nicer than it is (0 leaves it as it is)."""
    if increment > 0:
        os.nice(increment)
