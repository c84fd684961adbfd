"""`errkb explain ID`: ask the configured language model to rewrite an error's derived facts.

Off unless ERRKB_LLM_URL and ERRKB_LLM_MODEL are set. The prose is cached per (error, template
hash, model) and shown beside, never instead of, the derived fields; `--refresh` asks again.
"""

from __future__ import annotations

import json

import typer

from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.service.cli.failures import exit_code


def explain(
    error_id: str = typer.Argument(..., metavar="ID", help="16-hex error id"),
    refresh: bool = typer.Option(False, "--refresh", help="ask the model again"),
) -> None:
    """Add AI-written prose to one error's entry (cached; derived fields stay as they are)."""
    from errkb.service.read.entries import ai_explanation

    settings = Settings()
    engine = engine_from_settings(settings)
    upgrade(engine)
    try:
        with session_factory(engine)() as session:
            prose = ai_explanation(session, error_id.strip().lower(), settings, refresh=refresh)
    except ErrkbError as exc:
        typer.echo(f"error: {exc.message} (derived fields unchanged)", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    finally:
        engine.dispose()
    typer.echo(json.dumps(prose.model_dump(mode="json"), indent=2, ensure_ascii=False))
