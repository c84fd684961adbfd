"""`errkb watch`: follow the pinned projects on the package index and ingest each new release.

It reads the simple API of the index pip is configured with (see `ingest/sources/simple.py`),
so a mirror is followed the same way as PyPI. Each round prints one line per project or
failure; a failure (the index answers 500, times out, a release cannot be read) is retried the
next round, and what was stored before stays served. A running `errkb serve` sees each new
release at its next request: its caches and ETags follow the knowledge base's content key.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from errkb.core.db import Engine, engine_from_settings, upgrade
from errkb.core.errors import ErrkbError
from errkb.core.settings import Settings
from errkb.ingest.follow import Round, follow_round
from errkb.ingest.pins import Pins, load_pins
from errkb.ingest.pipeline import Job
from errkb.ingest.sources.download import Downloads
from errkb.ingest.sources.simple import pip_index_url
from errkb.service.cli.failures import exit_code
from errkb.service.cli.progress_view import phases, stamp

err = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True, highlight=False)


def watch(
    interval: Annotated[
        float, typer.Option(min=1, metavar="S", help="seconds between two looks at the index")
    ] = 600.0,
    once: Annotated[
        bool, typer.Option("--once", help="look once and exit (for cron); exit 1 on a failure")
    ] = False,
) -> None:
    """Follow the package index: ingest each new release of the pinned projects, then wait."""
    settings = Settings()
    try:
        pins = load_pins(settings.resolved_pins_file)
        engine = engine_from_settings(settings)
        upgrade(engine)
    except ErrkbError as exc:
        err.print(f"[red]error:[/red] {escape(exc.message)}")
        raise typer.Exit(exit_code(exc)) from exc
    index = pip_index_url(settings.simple_index_url)
    names = ", ".join(p.pypi_name for p in pins.repos if p.pypi_name) or "no project"
    every = "once" if once else f"every {interval:g} s"
    out.print(f"{stamp()} Following {names} on {index}, {every}.")
    try:
        while True:
            done = _round(settings, pins, engine, index)
            if once:
                raise typer.Exit(1 if done.failures else 0)
            time.sleep(interval)
    finally:
        engine.dispose()


def _round(settings: Settings, pins: Pins, engine: Engine, index: str) -> Round:
    """One look at the index, its outcome printed; the entry documents rebuilt if it added any."""
    job = Job(
        engine=engine,
        workers=settings.workers,
        workers_nice=settings.workers_nice,
        cache_dir=settings.cache_dir,
    )
    downloads = Downloads(
        settings.cache_dir / "pypi",
        settings.index_url,
        simple_url=index,
        timeout=settings.index_timeout_seconds,
    )
    try:
        with phases(err) as progress:
            done = follow_round(pins, job, downloads, settings.max_file_bytes, progress)
    finally:
        downloads.close()
    for summary in done.ingested:
        out.print(
            f"{stamp()} Ingested {summary.repo} {summary.label}: {summary.sites:,} raise sites, "
            f"{summary.new_errors:,} new errors, in {summary.seconds:.1f} s."
        )
    for line in done.current:
        out.print(f"{stamp()} {line}")
    for line in done.failures:
        out.print(f"{stamp()} Not done, tried again next time: {line}")
    if done.ingested and settings.materialize_entries:
        from errkb.service.cli.materialize import materialize_with_progress

        # The docs whose content changed first, then those one version longer: the release is
        # served meanwhile, each entry built on its first request until its doc is there.
        if materialize_with_progress(settings, out, defer=True).deferred:
            materialize_with_progress(settings, out)
    return done
