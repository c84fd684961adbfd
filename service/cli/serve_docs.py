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
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.settings import Settings

log = logging.getLogger("errkb.docs")
Child = subprocess.Popen[bytes]


def start_doc_builder(settings: Settings, console: Console) -> Child | None:
    """Start building the missing entry documents in the background, if any are missing."""
    if not settings.serve_builds_docs:
        return None
    from errkb.service.status.state import docs_status  # the entry builders: only when serving

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
    child = start_child(command)
    threading.Thread(
        target=relay_lines, args=(child, console, ""), name="doc-lines", daemon=True
    ).start()
    return child


def start_child(command: list[str], env: dict[str, str] | None = None) -> Child:
    """A background command of the server, its output piped to the server (`relay_lines`).

    It runs in a process group of its own: Ctrl-C in the terminal reaches only the server,
    which then stops the child and its workers together (`stop_doc_builder`), instead of each
    of them printing its own interruption.
    """
    return subprocess.Popen(  # noqa: S603 - our own interpreter and command
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )


def relay_lines(child: Child, console: Console, prefix: str) -> None:
    """Print the child's lines among the server's log until it ends; nothing once it is being
    stopped (its last words would be the server's own stop)."""
    assert child.stdout is not None  # noqa: S101 - piped by start_child
    for raw in child.stdout:
        line = raw.decode("utf-8", "replace").rstrip()
        if line.strip() and child not in _stopping:
            console.print(f"{prefix}{escape(line)}", highlight=False)


_stopping: set[Child] = set()
STOP_SECONDS = 1.0  # a child's grace after SIGTERM before its whole group is killed


def stop_doc_builder(process: Child | None) -> None:
    """End a background child with the server, its workers with it (what it committed stays):
    SIGTERM to its process group, then SIGKILL after `STOP_SECONDS` (every write it makes is a
    transaction, so a kill loses only the batch under way)."""
    if process is None or process.poll() is not None:
        return
    _stopping.add(process)
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process, signal.SIGKILL)  # its workers too, even when it has ended
    process.wait()


def _signal_group(process: Child, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


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
        self.process: Child | None = None
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
