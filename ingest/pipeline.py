"""Ingesting one snapshot: list its files, reuse cached per-file results, parse the rest on all
cores, link sites to flags, then hand the complete snapshot to the store in one transaction.

It runs in two halves, `read_snapshot` (read and parse) and `store_snapshot` (trace, link and
store), so that a history may read its next snapshot while this one is stored (`read_ahead`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from errkb.core.flag_catalog import flag_catalog
from errkb.core.records import (
    ExtractConfig,
    FileResult,
    FlagDef,
    Site,
    SnapshotKind,
    SnapshotStatus,
)
from errkb.ingest import store
from errkb.ingest.cache_lookup import cache_id
from errkb.ingest.file_results import FileResults
from errkb.ingest.flag_links.linker import linked_sites
from errkb.ingest.hierarchy import Hierarchy
from errkb.ingest.pins import RepoPin
from errkb.ingest.progress import NoProgress, Progress
from errkb.ingest.site_origins import with_origins
from errkb.ingest.snapshot_rows import Prepared, SitePreparer, prepare_site
from errkb.ingest.snapshot_writer import Linked
from errkb.ingest.sources.base import SnapshotInfo, Source, SourceFile
from errkb.ingest.workers import Workers, gc_paused


@dataclass
class SnapshotSummary:
    """What ingesting one snapshot did."""

    repo: str
    label: str
    kind: SnapshotKind
    commit: str
    status: SnapshotStatus = "ingested"
    files: int = 0
    files_parsed: int = 0  # distinct contents parsed (a file twice in a snapshot is once)
    cache_hits: int = 0
    # The snapshot's files, each counted once in one of: parsed now or taken from the cache
    # (both with a usable result), prefiltered, or skipped (by reason): they add up to `files`.
    read_parsed: int = 0
    read_cached: int = 0
    prefiltered: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    sites: int = 0
    # Sites per kind: {"raise": {class: n}, "indirect": n, "assert": n, "lookup": n}.
    site_counts: dict[str, Any] = field(default_factory=dict)
    errors: int = 0
    new_errors: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Job:
    """How to run the pipeline: database, parallelism and the test hook."""

    engine: Engine
    workers: int = 0  # 0 = every core
    workers_nice: int = 0  # niceness the parse processes add to this one's
    before_commit: Callable[[], None] | None = None
    # The cache folder: where the origin index keeps what it traced for other processes
    # (`origin_store`); None keeps it in this process only.
    cache_dir: Path | None = None


def repo_fields(repo: RepoPin) -> dict[str, Any]:
    """The repo row's columns, taken from the pins."""
    return {
        "name": repo.name,
        "git_url": repo.git_url,
        "web_url": repo.web_url,
        "pypi_name": repo.pypi_name,
        "path_prefix": repo.path_prefix,
        "launch_command": repo.launch_command,
        "vocabulary": repo.vocabulary().to_json(),
    }


def ingest_snapshot(
    source: Source, repo: RepoPin, config: ExtractConfig, job: Job, progress: Progress | None = None
) -> SnapshotSummary:
    """Ingest one snapshot; a snapshot already in the database is skipped untouched."""
    progress = progress or NoProgress()
    # The cyclic GC stays off for the whole snapshot (see `gc_paused`), and comes back on once
    # `_serially` has returned and its objects are freed: turned back on while they are alive
    # (the snapshot's files, results, sites), the first collection would have to go through them.
    with gc_paused():
        return _serially(source, repo, config, job, progress)


def _serially(
    source: Source, repo: RepoPin, config: ExtractConfig, job: Job, progress: Progress
) -> SnapshotSummary:
    read = read_snapshot(source, repo, config, job, progress)
    if isinstance(read, SnapshotSummary):
        return read
    return store_snapshot(read, progress)


@dataclass
class ReadSnapshot:
    """A snapshot read and parsed, its sites waiting to be traced, linked and stored. It holds
    its parse processes (the trace makes module facts on them) and its file-cache writes until
    `close`."""

    source: Source
    repo: RepoPin
    job: Job
    info: SnapshotInfo
    summary: SnapshotSummary
    started: float
    files: list[SourceFile]
    sites: list[Site]
    prepared: list[Prepared]
    flags: list[FlagDef]
    statuses: Counter[str]
    hierarchy: Hierarchy
    workers: Workers
    work: FileResults

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the file-cache rows, then stop the parse processes (`cancel`: at once)."""
        try:
            self.work.close()
        finally:
            self.workers.close(cancel=cancel)


def read_snapshot(
    source: Source,
    repo: RepoPin,
    config: ExtractConfig,
    job: Job,
    progress: Progress,
    workers: Workers | None = None,
) -> ReadSnapshot | SnapshotSummary:
    """The first half of an ingest: the snapshot's files read and parsed (on `workers`, else
    processes of its own), or its summary when the database holds it already."""
    started = time.perf_counter()
    # A release is downloaded here if its download has not finished yet.
    progress.phase(f"{repo.name}: downloading or opening the next snapshot", None)
    info = source.snapshot()
    summary = SnapshotSummary(repo.name, info.label, info.kind, info.commit)
    if store.snapshot_exists(job.engine, repo.name, info.kind, info.commit):
        summary.status = "already ingested"
        return summary
    progress.phase(f"{info.label}: reading", None)
    workers = workers or Workers(job.workers, nice=job.workers_nice)
    preparer = SitePreparer(repo.name)
    work = FileResults(config, job.engine, workers, on_result=preparer.add)
    try:
        for f in source.files(known=work.known):
            work.add(f)
        files = work.files
        summary.files = len(files)
        results = work.finish(progress)
        summary.cache_hits, summary.files_parsed = work.hits, work.parsed
        # The last file-cache rows are written (by a thread, mostly in the database driver)
        # while the sites are traced and linked.
        sites, prepared, flags, statuses = _collect(
            files, results, preparer, config, work.fresh_ids
        )
        hierarchy = Hierarchy(c for r in results.values() for c in r.classes)
    except BaseException:
        try:
            work.close()
        finally:
            workers.close(cancel=True)
        raise
    return ReadSnapshot(
        source, repo, job, info, summary, started, files, sites, prepared, flags, statuses,
        hierarchy, workers, work,
    )  # fmt: skip


def store_snapshot(
    read: ReadSnapshot, progress: Progress, ready: Callable[[], None] | None = None
) -> SnapshotSummary:
    """The second half: trace, link and store a snapshot read by `read_snapshot`. `ready` runs
    once the trace needs the parse processes no more (see `snapshot_origins`) and the file-cache
    rows are all written: the next snapshot may be read from then on."""
    info, summary, repo = read.info, read.summary, read.repo

    def written_then_ready() -> None:
        read.work.close()
        if ready is not None:
            ready()

    try:
        progress.phase(f"{info.label}: tracing where the checked values come from", None)
        traced = with_origins(
            read.source, read.files, read.sites, read.flags, repo, read.job.cache_dir,
            read.workers, written_then_ready if ready is not None else lambda: None,
        )  # fmt: skip
        # A site given an origin is stored with it (in its snippet): prepared again. The rest
        # (imports, the project's tests: half of a late sglang release) keep what the
        # preparer made while the files were parsed.
        prepared = [
            p if t is s else prepare_site(repo.name, t)
            for p, s, t in zip(read.prepared, read.sites, traced, strict=True)
        ]
        sites = traced
        progress.phase(f"{info.label}: linking flags", len(sites))
        occurrences = linked_sites(sites, flag_catalog(read.flags))
        progress.advance(len(sites))
    except BaseException:
        read.close(cancel=True)
        raise
    read.close()
    _store(read, sites, prepared, occurrences, progress)
    summary.seconds = time.perf_counter() - read.started
    return summary


def _store(
    read: ReadSnapshot,
    sites: list[Site],
    prepared: list[Prepared],
    occurrences: Linked,
    progress: Progress,
) -> None:
    """Write the snapshot in one transaction, filling in its summary."""
    info, summary, statuses = read.info, read.summary, read.statuses
    summary.prefiltered = statuses.pop("prefiltered", 0)
    summary.read_parsed = statuses.pop(_PARSED, 0)
    summary.read_cached = statuses.pop(_CACHED, 0)
    summary.skipped = dict(sorted(statuses.items()))
    summary.sites = len(sites)
    summary.site_counts = site_counts(sites)

    progress.phase(f"{info.label}: storing", None)
    counts = {
        "files": summary.files,
        "files_parsed": summary.files_parsed,
        "cache_hits": summary.cache_hits,
        "skipped": summary.skipped,
        "sites": summary.sites,
        "site_counts": summary.site_counts,
        "seconds": round(time.perf_counter() - read.started, 3),
    }
    written = store.write_snapshot(
        read.job.engine,
        repo=repo_fields(read.repo),
        info=info,
        occurrences=occurrences,
        flags=read.flags,
        counts=counts,
        prepared=prepared,
        before_commit=read.job.before_commit,
        chains={name: read.hierarchy.chain(name) for name in summary.site_counts.get("raise", {})},
    )
    if written is None:  # another process completed it meanwhile
        summary.status = "already ingested"
    else:
        summary.errors, summary.new_errors = written
        store.refresh_statistics(read.job.engine)


def site_counts(sites: Sequence[Site]) -> dict[str, Any]:
    """How many sites of each kind, raises by class: what the ingest summary prints."""
    by_class = Counter(s.exception for s in sites if s.kind == "raise")
    kinds = Counter(s.kind for s in sites if s.kind != "raise")
    return {"raise": dict(by_class.most_common()), **{k: kinds[k] for k in sorted(kinds)}}


_PARSED, _CACHED = " parsed", " cached"  # not statuses of a FileResult


def _collect(
    files: Sequence[SourceFile],
    results: dict[str, FileResult],
    preparer: SitePreparer,
    config: ExtractConfig,
    fresh_ids: frozenset[str],
) -> tuple[list[Site], list[Prepared], list[FlagDef], Counter[str]]:
    """Sites (with their prepared row parts) and flags at each file's own path (cached results
    carry the first path seen), and each file's fate counted once (see SnapshotSummary)."""
    sites: list[Site] = []
    prepared: list[Prepared] = []
    flags: list[FlagDef] = []
    statuses: Counter[str] = Counter()
    for f in files:
        if f.skip is not None:
            statuses[f.skip] += 1
            continue
        h = cache_id(f, config)
        result = results[h]
        if result.status == "ok":
            statuses[_PARSED if h in fresh_ids else _CACHED] += 1
        else:
            statuses[result.status] += 1
        sites.extend(s if s.path == f.path else replace(s, path=f.path) for s in result.sites)
        prepared.extend(preparer.of(h, result))
        flags.extend(d if d.path == f.path else replace(d, path=f.path) for d in result.flags)
    return sites, prepared, flags, statuses
