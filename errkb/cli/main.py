"""The `errkb` command line: ingest, serve, watch, status, docs, match, show, export-site and db
upgrade."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from typer.exceptions import TyperException

from errkb.cli import failures
from errkb.cli.docs import docs
from errkb.cli.explain import explain
from errkb.cli.export import export_site
from errkb.cli.ingest import ingest
from errkb.cli.match import match
from errkb.cli.serve_docs import start_doc_builder, stop_doc_builder
from errkb.cli.show import show
from errkb.cli.status import status
from errkb.cli.watch import watch
from errkb.core.db import engine_from_settings, prepare_schema, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings

app = typer.Typer(no_args_is_help=True, add_completion=False, help="errkb: error knowledge base")
db_app = typer.Typer(no_args_is_help=True, help="Database schema commands")
app.add_typer(db_app, name="db")
app.command()(ingest)
app.command()(show)
app.command()(match)
app.command()(explain)
app.command("export-site")(export_site)
app.command()(watch)
app.command()(status)
app.command()(docs)
_debug = False


@app.callback()
def options(
    debug: bool = typer.Option(False, "--debug", help="print the full traceback of a failure"),
) -> None:
    """errkb: error knowledge base"""
    global _debug
    _debug = debug


def main() -> None:
    """The console script: the app, with every failure as one line on stderr and its exit code."""
    failures.install_signal_handlers()
    try:
        code = app(standalone_mode=False)
    except TyperException as exc:  # bad usage: Typer's own message and code
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        code = exc.exit_code
    except (Exception, KeyboardInterrupt, failures.Terminated) as exc:
        code = failures.report(exc, debug=_debug, database_url=_database_url())
    sys.exit(code if isinstance(code, int) else 0)


def _database_url() -> str:
    """The configured database URL without its password, or "" if settings cannot be read."""
    try:
        from sqlalchemy.engine import make_url

        url = make_url(Settings().resolved_database_url)
        return url.render_as_string(hide_password=True)
    except Exception:  # the settings themselves may be what failed
        return ""


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every migration to the configured database."""
    engine = engine_from_settings(Settings())
    upgrade(engine)
    engine.dispose()
    typer.echo("database at head")


@app.command()
def serve(
    host: str | None = None,
    port: int | None = None,
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="server processes (default ERRKB_SERVE_WORKERS, 1)"
    ),
) -> None:
    """Serve the API and pages with uvicorn, in one process or several."""
    import uvicorn

    from errkb.service.server import server_options

    settings = Settings()
    _schema_ready(settings)
    options: dict[str, object] = {
        "host": host or settings.host,
        "port": port or settings.port,
        "access_log": settings.access_log,
        **server_options(settings),
    }
    processes = workers or settings.serve_workers
    builder = start_doc_builder(settings, Console(stderr=True, soft_wrap=True))
    try:
        if processes > 1:
            # Each worker builds its own app from the environment's settings, as uvicorn requires.
            uvicorn.run(SERVICE_FACTORY, factory=True, workers=processes, **options)  # type: ignore[arg-type]
            return
        from errkb.service.app import create_app

        uvicorn.run(create_app(settings), **options)  # type: ignore[arg-type]
    finally:
        stop_doc_builder(builder)


SERVICE_FACTORY = "errkb.service.app:create_app"


def _schema_ready(settings: Settings) -> None:
    """Migrate (or check the schema) once before any worker starts; one line on failure."""
    engine = engine_from_settings(settings)
    try:
        prepare_schema(engine, settings)
    except ErrkbError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(3) from None
    finally:
        engine.dispose()


if __name__ == "__main__":  # `python -m errkb.cli.main`: how `errkb serve` starts `errkb docs`
    main()
