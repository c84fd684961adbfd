"""The `errkb` command line: ingest, serve, mcp, watch, status, docs, match, show, export-site and
db upgrade."""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console
from typer.core import TyperArgument
from typer.exceptions import TyperException

from errkb.core.db import display_url, engine_from_settings, prepare_schema, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.service.cli import failures
from errkb.service.cli.docs import docs
from errkb.service.cli.explain import explain
from errkb.service.cli.export import export_site
from errkb.service.cli.ingest import ingest
from errkb.service.cli.match import match
from errkb.service.cli.serve_docs import DocKeeper
from errkb.service.cli.serve_ingest import PinIngest
from errkb.service.cli.show import show
from errkb.service.cli.status import status
from errkb.service.cli.watch import watch


# Plain help: Typer's Rich help shows every switch (--debug, --json, --help) as taking a <bool>.
# Options name their value by their metavar (`--pypi SPEC`); an argument's name is its
# placeholder, written as click writes it (`ID`, `[FILE]`), not as Typer does (`{ID} ... ID <str>`).
def _argument_usage(argument: TyperArgument) -> str:
    name = argument.display_name_raw
    return name if argument.required else f"[{name}]"


TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign,assignment]
TyperArgument._usage_display_name = _argument_usage  # type: ignore[method-assign,assignment]

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="errkb: error knowledge base",
)
db_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Database schema commands")
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
        return display_url(Settings().resolved_database_url)
    except Exception:  # the settings themselves may be what failed
        return ""


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every migration to the configured database."""
    engine = engine_from_settings(Settings(), create_folders=True)  # asked to make it: may create
    upgrade(engine)
    engine.dispose()
    typer.echo("database at head")


@app.command()
def serve(
    host: str | None = typer.Option(None, metavar="HOST", help="address (default ERRKB_HOST)"),
    port: int | None = typer.Option(None, metavar="PORT", help="port (default ERRKB_PORT, 8000)"),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        metavar="N",
        help="server processes (default ERRKB_SERVE_WORKERS, 1)",
    ),
    ingest: bool = typer.Option(
        False, "--ingest", help="ingest the pins in the background while serving (make run)"
    ),
) -> None:
    """Serve the API and pages with uvicorn, in one process or several."""
    import uvicorn

    from errkb.service.server import server_options

    # The address is a setting too (the links of MCP answers and /mcp's Host check read it), and
    # each server process reads its settings from the environment.
    if host:
        os.environ["ERRKB_HOST"] = host
    if port:
        os.environ["ERRKB_PORT"] = str(port)
    settings = Settings()
    _port_free(host or settings.host, port or settings.port)
    _schema_ready(settings)
    options: dict[str, object] = {
        "host": host or settings.host,
        "port": port or settings.port,
        "access_log": settings.access_log,
        **server_options(settings),
    }
    processes = workers or settings.serve_workers
    console = Console(stderr=True, soft_wrap=True)
    background: PinIngest | None = None
    keeper = DocKeeper(settings, console, paused=lambda: bool(background and background.running))
    if ingest:
        background = PinIngest(console, keeper.wake)
        background.start()
    keeper.start()
    try:
        if processes > 1:
            # Each process builds its own app from the environment's settings, on its own socket.
            from errkb.service.processes import serve_processes

            serve_processes(
                SERVICE_FACTORY,
                str(options.pop("host")),
                int(str(options.pop("port"))),
                processes,
                options,
            )
            return
        from errkb.service.app import create_app

        uvicorn.run(create_app(settings), **options)  # type: ignore[arg-type]
    finally:
        keeper.stop()
        if background is not None:
            background.stop()


SERVICE_FACTORY = "errkb.service.app:create_app"


@app.command()
def mcp() -> None:
    """Serve the MCP tools over stdio, for a desktop agent that starts errkb itself."""
    from errkb.service.mcp.stdio import run_stdio

    run_stdio(Settings())


def _port_free(host: str, port: int) -> None:
    """One line and the configuration exit code when the address is taken, before anything
    starts (uvicorn said so only after the whole start-up, as `[Errno 98]`); the words are those
    of the multi-process server (`service.processes`)."""
    import socket

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind((host, port))
    except OSError as exc:
        why = exc.strerror or str(exc)
        typer.echo(
            f"error: cannot listen on {host}:{port}: {why} (choose another --port)", err=True
        )
        raise typer.Exit(failures.CONFIG) from None


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


if (
    __name__ == "__main__"
):  # `python -m errkb.service.cli.main`: how `errkb serve` starts `errkb docs`
    main()
