"""`errkb export-site OUTDIR`: write the error docs as a static site
(see `errkb.service.pages.export`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from errkb.core.db import engine_from_settings, session_factory, upgrade
from errkb.core.settings import Settings


def export_site(
    outdir: Annotated[Path, typer.Argument(metavar="OUTDIR", help="folder to write the site into")],
    base_url: Annotated[
        str,
        typer.Option(
            metavar="URL", help="public URL the site is served from; default: ERRKB_PUBLIC_URL"
        ),
    ] = "",
    workers: Annotated[
        int, typer.Option(metavar="N", help="processes writing entry pages; 0 = all cores")
    ] = 0,
) -> None:
    """Write every error page, the index, module and flag pages and sitemap.xml to OUTDIR."""
    from errkb.service.pages.export import export_site as write_site

    settings = Settings()
    engine = engine_from_settings(settings)
    upgrade(engine)
    started = time.perf_counter()
    columns = (TextColumn("entries"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with session_factory(engine)() as session, Progress(*columns, transient=True) as bar:
            task = bar.add_task("entries", total=None)
            stats = write_site(
                session,
                outdir,
                base_url=base_url or settings.public_url,
                workers=workers,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    finally:
        engine.dispose()
    typer.echo(
        f"wrote {stats.errors} error pages, {stats.modules} module pages, {stats.flags} flag "
        f"pages ({stats.files} files) to {outdir} in {time.perf_counter() - started:.1f} s"
    )
    if not (base_url or settings.public_url):
        typer.echo("note: sitemap.xml has relative URLs; pass --base-url for search engines")
