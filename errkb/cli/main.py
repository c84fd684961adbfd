"""The `errkb` command line: ingest, serve, match, show, export-site and db upgrade."""

from __future__ import annotations

import typer

from errkb.cli.explain import explain
from errkb.cli.export import export_site
from errkb.cli.ingest import ingest
from errkb.cli.match import match
from errkb.cli.show import show
from errkb.core.db import engine_from_settings, upgrade
from errkb.core.settings import Settings

app = typer.Typer(no_args_is_help=True, add_completion=False, help="errkb: error knowledge base")
db_app = typer.Typer(no_args_is_help=True, help="Database schema commands")
app.add_typer(db_app, name="db")
app.command()(ingest)
app.command()(show)
app.command()(match)
app.command()(explain)
app.command("export-site")(export_site)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every migration to the configured database."""
    engine = engine_from_settings(Settings())
    upgrade(engine)
    engine.dispose()
    typer.echo("database at head")


@app.command()
def serve(host: str | None = None, port: int | None = None) -> None:
    """Serve the API and pages with uvicorn."""
    import uvicorn

    from errkb.service.app import create_app

    settings = Settings()
    uvicorn.run(create_app(settings), host=host or settings.host, port=port or settings.port)
