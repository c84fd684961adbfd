"""`errkb ingest`: run the pipeline over the pins or the sources named on the command line,
with a Rich progress bar and a summary (see `ingest_summary`).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import OperationalError

from errkb.core.db import Engine, engine_from_settings, upgrade
from errkb.core.errors import BadInput, ErrkbError
from errkb.core.settings import Settings
from errkb.ingest import plan, store
from errkb.ingest.pins import Pins, RepoPin, load_pins
from errkb.ingest.plan import Planned, Releases
from errkb.ingest.sources.download import Downloads
from errkb.service.cli.failures import exit_code
from errkb.service.cli.ingest_summary import DownloadTotals, summary, summary_json
from errkb.service.cli.progress_view import phases

if TYPE_CHECKING:
    from errkb.core.records import ExtractConfig
    from errkb.ingest.pipeline import SnapshotSummary
    from errkb.ingest.sources.base import Source

err = Console(stderr=True, soft_wrap=True)  # one line per failure, however long


def _error(message: str) -> None:
    """One failure, on one line however narrow the terminal (a log keeps it whole)."""
    err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)


def _notice(message: str) -> None:
    """Something skipped that the user should know about."""
    err.print(f"[yellow]{escape(message)}[/yellow]", soft_wrap=True)


# The options, named here so that `ingest` reads as what it does.
PypiOption = Annotated[
    list[str] | None,
    typer.Option(
        metavar="SPEC",
        help="Releases: name==version, a bound like 'name>=0.4', or a bare name for every "
        "release (repeatable)",
    ),
]
GitOption = Annotated[
    str | None, typer.Option(metavar="URL", help="A git URL or local repository path")
]
RefOption = Annotated[
    list[str] | None, typer.Option(metavar="REF", help="A git ref to pin (repeatable)")
]
DirOption = Annotated[Path | None, typer.Option(metavar="PATH", help="A local folder")]
LabelOption = Annotated[
    str | None, typer.Option(metavar="NAME", help="The folder snapshot's label")
]
RepoOption = Annotated[
    str | None, typer.Option(metavar="NAME", help="The pins repo whose config to use")
]
PinsOption = Annotated[
    Path | None, typer.Option("--pins", metavar="FILE", help="Pins file (default: settings)")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print every snapshot's figures as JSON")]
ClassesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--classes",
        metavar="CLASS",
        help="Only raises of these exception classes, no asserts (repeatable; default: pins)",
    ),
]
DocsOption = Annotated[
    bool,
    typer.Option(
        "--docs",
        help="Also build the entry documents before returning (for a static export or a "
        "read-only deployment; by default the server and `errkb docs` build them)",
    ),
]


def ingest(
    pypi: PypiOption = None,
    git: GitOption = None,
    ref: RefOption = None,
    dir: DirOption = None,  # noqa: A002
    label: LabelOption = None,
    repo: RepoOption = None,
    pins_file: PinsOption = None,
    as_json: JsonOption = False,
    classes: ClassesOption = None,
    docs: DocsOption = False,
) -> None:
    """Ingest snapshots: every pin in pins.toml, or the --pypi / --git / --dir sources given.

    It returns once they are stored: their entries are served correctly from then on, each
    built on its first request, and the documents that make reads one row are left to the
    running server's keeper and to `errkb docs`, or built here with --docs.
    """
    # Imported here: the pipeline pulls in the extractor, which `errkb serve` never needs.
    from errkb.ingest.pipeline import SnapshotSummary

    settings = Settings()
    summaries: list[SnapshotSummary] = []
    failures: list[str] = []

    def skipped(repo_pin: RepoPin, version: str) -> None:
        summaries.append(
            SnapshotSummary(repo_pin.name, version, "pypi", version, status="already ingested")
        )

    started = time.perf_counter()
    try:
        pins = load_pins(pins_file or settings.resolved_pins_file)
        if dir is not None:  # a folder errkb cannot use fails before the database is touched
            root, _ = plan.folder_and_label(dir, label, named=bool(repo))
            if next(root.rglob("*.py"), None) is None:
                raise BadInput(f"{dir} holds no Python file (*.py): there is nothing to ingest")
        engine = engine_from_settings(settings, create_folders=True)
    except ErrkbError as exc:
        _error(exc.message)
        raise typer.Exit(exit_code(exc)) from exc
    downloads = Downloads(settings.cache_dir / "pypi", settings.index_url)
    try:
        upgrade(engine)
        releases = Releases(downloads, _stored(engine), skipped)
        try:
            planned = _planned(settings, pins, pypi, git, ref, dir, label, repo, releases)
        except ErrkbError as exc:
            _error(exc.message)
            raise typer.Exit(exit_code(exc)) from exc
        _ingest_each(planned, engine, settings, summaries, failures, tuple(classes or ()))
        _compact_after(engine, summaries)
    finally:
        downloads.close()
        engine.dispose()
    if failures and not summaries:  # nothing got as far as a snapshot: its error line says all
        raise typer.Exit(1)
    seconds = time.perf_counter() - started
    fetched = DownloadTotals(downloads.fetched, downloads.bytes, downloads.seconds)
    _report(settings, summaries, seconds, failures, fetched, as_json=as_json, docs=docs)
    if failures:
        raise typer.Exit(1)


def _ingest_each(
    planned: Iterable[Planned],
    engine: Engine,
    settings: Settings,
    summaries: list[SnapshotSummary],
    failures: list[str],
    classes: tuple[str, ...] = (),
) -> None:
    """Ingest every planned source under a progress bar, in order with the releases skipped
    meanwhile (`summaries` gets both), each next source read and parsed while the one before is
    traced and stored (`ingest.read_ahead`); a failed source is noted in `failures`, not fatal.
    `classes` limits each source to raises of those classes (`--classes`)."""
    from errkb.ingest.pipeline import Job
    from errkb.ingest.read_ahead import ingest_in_turn

    job = Job(
        engine=engine,
        workers=settings.workers,
        workers_nice=settings.workers_nice,
        cache_dir=settings.cache_dir,
    )

    def configured() -> Iterator[tuple[RepoPin, ExtractConfig, Callable[[], Source]]]:
        for repo_pin, make_source in _guarded(planned, failures):
            if classes:
                repo_pin = repo_pin.only(classes)
            yield repo_pin, repo_pin.extract_config(settings.max_file_bytes), make_source

    def failed(exc: ErrkbError) -> None:  # one bad source must not cost the others
        failures.append(exc.message)
        _error(exc.message)

    with phases(err) as progress:
        ingest_in_turn(configured(), job, progress, summaries, failed, beside=progress.beside())


def _report(
    settings: Settings,
    summaries: list[SnapshotSummary],
    seconds: float,
    failures: list[str],
    fetched: DownloadTotals,
    *,
    as_json: bool,
    docs: bool,
) -> None:
    """The summary (a table, or JSON on stdout), then the entry docs: built (`docs`), or one line
    on who builds them."""
    ingested = any(s.status == "ingested" for s in summaries)
    if as_json:  # the entries' figures go into the JSON, so stdout stays one document
        report = summary_json(summaries, seconds, failures, fetched)
        if docs:
            from errkb.service.cli.materialize import materialize_entries_quietly

            report["entry_docs"] = materialize_entries_quietly(settings, defer=True)
        else:
            report["entry_docs"] = None
        typer.echo(json.dumps(report, indent=2))
        return
    Console().print(summary(summaries, seconds, len(failures), fetched))
    if docs:
        from errkb.service.cli.materialize import materialize_with_progress

        materialize_with_progress(settings, err, defer=True)  # on stderr, after the summary
    elif ingested:
        err.print(DOCS_LEFT, soft_wrap=True, highlight=False)


DOCS_LEFT = (
    "Entry documents are left to `errkb serve` (each built on its first request, the rest in "
    "the background) or to `errkb docs`; `--docs` builds them before returning."
)


COMPACT_AFTER = 20  # snapshots written in one ingest before the SQLite file is compacted


def _compact_after(engine: Engine, summaries: list[SnapshotSummary]) -> None:
    """After a big ingest, rewrite a SQLite file without its free pages (see `store.compact`)."""
    if sum(1 for s in summaries if s.status == "ingested") < COMPACT_AFTER:
        return
    try:
        sizes = store.compact(engine)
    except OperationalError as exc:  # another process holds the database: not worth failing
        _notice(f"the database file was not compacted: {exc.orig}")
        return
    if sizes is not None:
        before, after = sizes
        err.print(
            f"Compacted the database file from {before / 1e6:.0f} MB to {after / 1e6:.0f} MB."
        )


def _stored(engine: Engine) -> Callable[[str, str], bool]:
    """Whether a PyPI release of a repo is stored already (asked before downloading it)."""
    return lambda repo_name, version: store.snapshot_exists(engine, repo_name, "pypi", version)


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
            _error(exc.message)
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
    releases: Releases,
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
        return plan.pinned(pins, cache, max_bytes, _notice, releases)
    out: list[Iterable[Planned]] = []
    for spec in pypi or []:
        out.append(plan.pypi_spec_planned(spec, pins, repo, releases, max_bytes))
    if folder:
        out.append([plan.dir_planned(folder, label, pins, repo, max_bytes)])
    if git:
        repo_pin = plan.git_repo_pin(git, pins, repo)
        out.append(plan.git_planned(repo_pin, git, ref or ["HEAD"], cache, max_bytes))
    return itertools.chain.from_iterable(out)
