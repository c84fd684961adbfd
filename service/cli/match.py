"""`errkb match [FILE|-]`: the errors a log or traceback shows, from the terminal.

Runs the same matcher as `POST /api/match` on an index built from the configured database, and
prints a table (or, with `--json`, the API's response body). Exits 1 when nothing matched, like
grep, so scripts can test for a known error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from errkb.core.db import engine_from_settings, upgrade
from errkb.core.settings import Settings
from errkb.service.cli.failures import USAGE


def match(
    file: str = typer.Argument(
        "-", metavar="FILE", help="the log or traceback to match; - (the default) reads stdin"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the API's JSON response"),
    limit: int = typer.Option(10, min=1, max=50, metavar="N", help="most matches to show"),
) -> None:
    """Show which known errors a pasted log or traceback contains."""
    from errkb.service.read.matches import match_answer, match_index

    raw = sys.stdin.buffer.read() if file == "-" else _read(Path(file))
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        where = "standard input" if file == "-" else file
        typer.echo(
            f"error: {where} is empty: give the log or traceback to match, as a file or on "
            "standard input",
            err=True,
        )
        raise typer.Exit(USAGE)
    settings = Settings()
    engine = engine_from_settings(settings)
    upgrade(engine)
    try:
        index = match_index(engine)
    finally:
        engine.dispose()
    response = match_answer(index, text, limit=limit, public_url=settings.public_url)
    if as_json:
        typer.echo(response.model_dump_json(indent=2))
    else:
        _print_table(response, text)
    if not response.matches:
        raise typer.Exit(1)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        typer.echo(f"error: cannot read {path}: {exc.strerror}", err=True)
        raise typer.Exit(USAGE) from exc


def _print_table(response: object, text: str) -> None:
    from errkb.service.read.matches import MatchResponse

    assert isinstance(response, MatchResponse)
    console = Console()
    if response.raised_by is not None:
        console.print(response.raised_by.text)
    if not response.matches:
        console.print("no known error found")
        return
    table = Table(show_lines=True)
    table.add_column("score", no_wrap=True)
    # The id is one unbroken line (copied into `errkb show`); the title wraps below it.
    table.add_column("error", overflow="fold", min_width=16)
    for name in ("matched text", "values", "site", "snapshots"):
        table.add_column(name, overflow="fold")
    for m in response.matches:
        shown = " ".join(text[m.span.start : m.span.end].split())
        site = f"{m.site.path}:{m.site.line}\n{m.site.function}" if m.site else ""
        table.add_row(
            Text(f"{m.score:.2f}", style="green" if m.score >= 0.8 else "yellow"),
            Text(f"{m.id}\n{m.title}"),
            Text(shown[:300]),
            Text("\n".join(f"{k} = {v}" for k, v in m.params.items())),
            Text(site),
            Text(", ".join(m.snapshots)),
        )
    console.print(table)
    for m in response.matches:
        if m.note:
            console.print(f"{m.id}: {m.note}")
