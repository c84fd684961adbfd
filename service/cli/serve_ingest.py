"""`errkb serve --ingest`: serve at once and ingest the pins behind the running server.

A first run (`make run`) would otherwise wait for every pinned release to be parsed before the
server starts: minutes on a fresh machine. With `--ingest` the server starts on whatever the
knowledge base holds (nothing, the first time: it says so) while `errkb ingest` runs in a
process of its own. Each release is committed whole as soon as it is parsed, and the running
server sees it at its next request (its caches follow the knowledge base's content key), so the
first entry is served once the first release is stored. The ingest's lines are printed among
the server's log, each prefixed with "ingest:"; once it ends, the entry documents it left
missing are built in the background (`serve_docs.DocKeeper`). Stopping the server stops both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable

from rich.console import Console

from errkb.service.cli.progress_view import stamp
from errkb.service.cli.serve_docs import relay_lines, start_child, stop_doc_builder


class PinIngest:
    """`errkb ingest` of the pins in a child process, then `then()` (wake the doc keeper)."""

    def __init__(self, console: Console, then: Callable[[], None]) -> None:
        self.console = console
        self.then = then
        self.child: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pin-ingest", daemon=True)

    def start(self) -> None:
        """Start the ingest; returns at once."""
        self.console.print(
            f"{stamp()} Ingesting the pinned releases in the background: each one is served as "
            "soon as it is stored.",
            highlight=False,
        )
        # Not a terminal: the child prints one line per phase instead of bars, and the server
        # builds the entry documents (on request, then in the background once the ingest ends).
        env = {**os.environ, "TERM": "dumb"}
        command = [sys.executable, "-m", "errkb.service.cli.main", "ingest"]
        self.child = start_child(command, env)
        self._thread.start()

    def _run(self) -> None:
        child = self.child
        assert child is not None  # noqa: S101 - set by start()
        relay_lines(child, self.console, "ingest: ")
        code = child.wait()
        if self._stopping.is_set():
            return
        if code != 0:
            self.console.print(
                f"{stamp()} The background ingest stopped (exit {code}); the server goes on "
                "with what was stored.",
                highlight=False,
            )
        self.then()

    @property
    def running(self) -> bool:
        """The ingest has started and not ended."""
        return self.child is not None and self.child.poll() is None

    def stop(self) -> None:
        """End the ingest (what was committed stays)."""
        self._stopping.set()
        stop_doc_builder(self.child)  # the same end as for any child: terminate, then kill
