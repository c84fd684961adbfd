"""`errkb docs`: build the entry documents whose inputs changed, on its own.

`errkb ingest --docs` and `errkb watch` do it after each ingest; `errkb ingest` alone returns
once the releases are stored and leaves the documents to this command, to `errkb serve` (which
runs it in the background when documents are missing) and to first requests. `--force` builds
every document again, with a newly trained compression dictionary (the occasional step that
keeps the docs small as the history grows).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from errkb.core.settings import Settings


def docs(
    force: Annotated[
        bool,
        typer.Option("--force", help="rebuild every document and retrain the dictionary"),
    ] = False,
    lines: Annotated[
        bool, typer.Option("--lines", help="progress as lines, never a bar (for logs)")
    ] = False,
) -> None:
    """Build the entry documents whose inputs changed (every one with --force)."""
    # Imported here: the entry builders take a second to import, which every other command of
    # `errkb` would pay at start-up.
    from errkb.service.cli.materialize import materialize_with_progress

    console = Console(stderr=True, soft_wrap=True, force_terminal=False if lines else None)
    materialize_with_progress(Settings(), console, force=force)
