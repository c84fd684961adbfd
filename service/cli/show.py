"""`errkb show ID`: print one error's entry as JSON, the same entry `GET /api/errors/{id}` serves
(its stored doc when current, else built now; see `errkb.service.read.entries`)."""

from __future__ import annotations

import json
import re

import typer

from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.service.cli.failures import USAGE, exit_code

ERROR_ID = re.compile(r"[0-9a-f]{16}")


def show(error_id: str = typer.Argument(..., metavar="ID", help="16-hex error id")) -> None:
    """Print the entry of one error as JSON."""
    from errkb.service.read.entries import entry
    from errkb.service.read.status import content_key

    wanted = error_id.strip().lower()
    if not ERROR_ID.fullmatch(wanted):
        typer.echo(
            f"error: {error_id!r} is not an error id: an id is 16 hexadecimal digits, as "
            "`errkb match` and the pages show them",
            err=True,
        )
        raise typer.Exit(USAGE)
    settings = Settings()
    engine = engine_from_settings(settings)
    upgrade(engine)
    try:
        with session_factory(engine)() as session:
            key = content_key(session)
            shown = entry(session, wanted, key=key, settings=settings)
    except ErrkbError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    finally:
        engine.dispose()
    out = shown.model_dump(mode="json")
    typer.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
