"""`errkb ingest`: run the pipeline over the pins or the sources named on the command line,
with a Rich progress bar and a summary table.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from errkb.cli.failures import exit_code
from errkb.core.db import engine_from_settings, upgrade
from errkb.core.errors import BadInput, ErrkbError
from errkb.core.settings import Settings
from errkb.ingest import plan
from errkb.ingest.pins import Pins, load_pins
from errkb.ingest.plan import Planned

if TYPE_CHECKING:
    from errkb.ingest.pipeline import SnapshotSummary

err = Console(stderr=True, soft_wrap=True)  # one line per failure, however long


class RichProgress:
    """The pipeline's progress shown as one Rich task per phase."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("starting", total=None)

    def phase(self, description: str, total: int | None) -> None:
        """Restart the bar for a new phase."""
        self.progress.reset(self.task, description=description, total=total, completed=0)

    def advance(self, steps: int = 1) -> None:
        """Advance the bar."""
        self.progress.advance(self.task, steps)


def ingest(
    pypi: Annotated[
        list[str] | None, typer.Option(help="A release, name==version (repeatable)")
    ] = None,
    git: Annotated[str | None, typer.Option(help="A git URL or local repository path")] = None,
    ref: Annotated[list[str] | None, typer.Option(help="A git ref to pin (repeatable)")] = None,
    dir: Annotated[Path | None, typer.Option(help="A local folder")] = None,  # noqa: A002
    label: Annotated[str | None, typer.Option(help="The folder snapshot's label")] = None,
    repo: Annotated[str | None, typer.Option(help="The pins repo whose config to use")] = None,
    pins_file: Annotated[
        Path | None, typer.Option("--pins", help="Pins file (default: settings)")
    ] = None,
) -> None:
    """Ingest snapshots: every pin in pins.toml, or the --pypi / --git / --dir sources given."""
    # Imported here: the pipeline pulls in the extractor, which `errkb serve` never needs.
    from errkb.ingest.pipeline import Job, ingest_snapshot

    settings = Settings()
    try:
        pins = load_pins(pins_file or settings.resolved_pins_file)
        planned = _planned(settings, pins, pypi, git, ref, dir, label, repo)
        engine = engine_from_settings(settings)
    except ErrkbError as exc:
        err.print(f"[red]error:[/red] {escape(exc.message)}")
        raise typer.Exit(exit_code(exc)) from exc
    upgrade(engine)
    job = Job(engine=engine, workers=settings.workers)
    summaries: list[SnapshotSummary] = []
    failures: list[str] = []
    started = time.perf_counter()
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as bar:
            progress = RichProgress(bar)
            for repo_pin, make_source in _guarded(planned, failures):
                try:
                    source = make_source()
                    try:
                        config = repo_pin.extract_config(settings.max_file_bytes)
                        summaries.append(ingest_snapshot(source, repo_pin, config, job, progress))
                    finally:
                        source.close()
                except ErrkbError as exc:  # one bad source must not cost the others
                    failures.append(exc.message)
                    err.print(f"[red]error:[/red] {escape(exc.message)}")
    finally:
        engine.dispose()
    Console().print(summary_table(summaries, time.perf_counter() - started))
    if failures:
        raise typer.Exit(1)


def _guarded(planned: Iterable[Planned], failures: list[str]) -> Iterator[Planned]:
    """The planned sources; an error while planning (e.g. opening a repo) ends the plan."""
    iterator = iter(planned)
    while True:
        try:
            yield next(iterator)
        except StopIteration:
            return
        except ErrkbError as exc:
            failures.append(exc.message)
            err.print(f"[red]error:[/red] {escape(exc.message)}")
            return


def _planned(
    settings: Settings,
    pins: Pins,
    pypi: list[str] | None,
    git: str | None,
    ref: list[str] | None,
    folder: Path | None,
    label: str | None,
    repo: str | None,
) -> Iterable[Planned]:
    """The (repo config, source factory) pairs this invocation means; all pins by default."""
    cache = settings.cache_dir
    max_bytes = settings.max_file_bytes
    if ref and not git:
        raise BadInput("--ref needs --git")
    if label and not folder:
        raise BadInput("--label needs --dir")
    if not (pypi or git or folder):
        if repo:
            pins = Pins(repos=(pins.repo(repo),))
        return plan.pinned(pins, cache, max_bytes, lambda msg: err.print(f"[yellow]{msg}[/yellow]"))
    out: list[Planned] = []
    for spec in pypi or []:
        out.append(plan.pypi_planned(spec, pins, repo, cache, max_bytes))
    if folder:
        out.append(plan.dir_planned(folder, label, pins, repo, max_bytes))
    if git:
        repo_pin = plan.git_repo_pin(git, pins, repo)
        return itertools.chain(
            out, plan.git_planned(repo_pin, git, ref or ["HEAD"], cache, max_bytes)
        )
    return out


def summary_table(summaries: list[SnapshotSummary], seconds: float) -> Table:
    """One column per snapshot plus a total, one row per figure (fits a narrow terminal)."""
    table = Table(title=f"ingest summary: {len(summaries)} snapshot(s)")
    table.add_column("")
    for s in summaries:
        table.add_column(f"{s.repo}\n{s.label}", justify="right")
    table.add_column("total", justify="right")

    def row(name: str, values: list[str], total: str) -> None:
        table.add_row(name, *values, total)

    skipped_total: dict[str, int] = {}
    for s in summaries:
        for reason, n in s.skipped.items():
            skipped_total[reason] = skipped_total.get(reason, 0) + n
    row("status", [s.status for s in summaries], "")
    for name, attr in (
        ("files", "files"),
        ("files parsed", "files_parsed"),
        ("cache hits", "cache_hits"),
        ("prefiltered", "prefiltered"),
    ):
        values = [getattr(s, attr) for s in summaries]
        row(name, [str(v) for v in values], str(sum(values)))
    for reason in sorted(skipped_total):
        row(
            f"skipped: {reason}",
            [str(s.skipped.get(reason, 0)) for s in summaries],
            str(skipped_total[reason]),
        )
    if not skipped_total:
        row("skipped", ["0" for _ in summaries], "0")
    row("sites", [str(s.sites) for s in summaries], str(sum(s.sites for s in summaries)))
    row("errors", [str(s.errors) for s in summaries], "")
    row(
        "new errors",
        [str(s.new_errors) for s in summaries],
        str(sum(s.new_errors for s in summaries)),
    )
    row("seconds", [f"{s.seconds:.1f}" for s in summaries], f"{seconds:.1f}")
    return table
