"""Entry documents built behind a starting server, so a first run serves at once.

`make run` ingests without building the documents and starts `errkb serve` right away: each
entry asked for is built on its first request and stored. When documents are missing or out of
date, the server also starts `errkb docs --lines` in a process of its own (at lower priority:
requests come first), which builds the rest and prints its progress as lines among the server's
log; the process ends with the server.
"""

from __future__ import annotations

import subprocess
import sys

from rich.console import Console

from errkb.core.db import engine_from_settings, session_factory
from errkb.core.settings import Settings
from errkb.service.status.state import docs_status


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
