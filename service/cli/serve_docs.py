"""Entry documents built behind a running server, so a first run and a new release serve at once.

`make run` ingests without building the documents and starts `errkb serve` right away, and an
`errkb ingest` of a new release beside a running server leaves the documents that the release
only lengthened: each entry asked for is built on its first request and stored. When documents
are missing or out of date, the server also starts `errkb docs --lines` in a process of its own
(at lower priority: requests come first), which builds the rest and prints its progress as lines
among the server's log. `DocKeeper` looks at start-up and then every
`ERRKB_SERVE_DOCS_CHECK_SECONDS`; the process ends with the server.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Callable

from rich.console import Console

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.settings import Settings
from errkb.service.status.state import docs_status

log = logging.getLogger("errkb.docs")


def start_doc_builder(settings: Settings, console: Console) -> subprocess.Popen[bytes] | None:
    """Start building the missing entry documents in the background, if any are missing."""
    if not settings.serve_builds_docs:
        return None
    engine = engine_from_settings(settings)
    try:
        with session_factory(engine)() as session:
            state = docs_status(session)
    finally:
        engine.dispose()
    if state.all_current or state.entries == 0:
        return None
    missing = state.entries - state.current
    console.print(
        f"{missing:,} of {state.entries:,} entry documents are missing or out of date: they are "
        "built in the background, and any entry asked for meanwhile is built on its request.",
        highlight=False,
    )
    command = [sys.executable, "-m", "errkb.service.cli.main", "docs", "--lines"]
    return subprocess.Popen(command)  # noqa: S603 - our own interpreter and command


def stop_doc_builder(process: subprocess.Popen[bytes] | None) -> None:
    """End the background build with the server (what it stored so far stays)."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


class DocKeeper:
    """Starts the background build whenever documents are out of date and none runs: at once,
    then every `settings.serve_docs_check_seconds`, and when woken (an ingest beside it ended).
    `paused()` true holds it back (the server's own pin ingest is still committing releases)."""

    def __init__(
        self, settings: Settings, console: Console, paused: Callable[[], bool] = lambda: False
    ) -> None:
        self.settings = settings
        self.console = console
        self.paused = paused
        self.process: subprocess.Popen[bytes] | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="doc-keeper", daemon=True)

    def start(self) -> None:
        """Look now, then keep looking in a thread of its own (not if docs are not built)."""
        if self.settings.serve_builds_docs:
            self._thread.start()

    def wake(self) -> None:
        """Look again now."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()  # a wake during the look below makes the wait return at once
            if not self.paused() and (self.process is None or self.process.poll() is not None):
                try:
                    self.process = start_doc_builder(self.settings, self.console)
                except Exception:  # noqa: BLE001 - a database hiccup: look again next time
                    log.warning("could not check the entry documents", exc_info=True)
            self._wake.wait(self.settings.serve_docs_check_seconds)

    def stop(self) -> None:
        """End the keeper and its build (what it stored so far stays)."""
        self._stopping.set()
        self._wake.set()
        stop_doc_builder(self.process)
