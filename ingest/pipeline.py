"""Ingesting one snapshot: list its files, reuse cached per-file results, parse the rest on all
cores, link sites to flags, then hand the complete snapshot to the store in one transaction.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sqlalchemy import Engine

from ingest import store
from ingest.extract import EXTRACTOR_VERSION
from ingest.extract.decode import rejected
from ingest.extract.incremental import MIN_UNIT_BYTES, Split
from ingest.filecache import decode_result, extractor_key
from ingest.flags import flag_catalog as flags_catalog
from ingest.flags import path_variant
from ingest.pins import RepoPin
from ingest.records import ExtractConfig, FileResult, FlagDef, Site
from ingest.sources.base import Source, SourceFile
from ingest.workers import Workers, extract_chunk, gc_paused, link_chunk, split_chunk

INLINE_BYTES = 256_000  # below this much to parse, starting processes costs more than it saves
CHUNK_BYTES = 1_000_000
WARM_BYTES = 8_000_000  # a snapshot this big will use the processes: start them while reading


class Progress(Protocol):
    """Where the pipeline reports its phases (the CLI passes a Rich progress bar)."""

    def phase(self, description: str, total: int | None) -> None:
        """Start a phase of `total` steps."""
        ...

    def advance(self, steps: int = 1) -> None:
        """Mark steps of the current phase done."""
        ...


class NoProgress:
    """Progress that reports nothing."""

    def phase(self, description: str, total: int | None) -> None:
        """Ignore the phase."""

    def advance(self, steps: int = 1) -> None:
        """Ignore the steps."""


@dataclass
class SnapshotSummary:
    """What ingesting one snapshot did."""

    repo: str
    label: str
    kind: str
    commit: str
    status: str = "ingested"  # ingested | already ingested
    files: int = 0
    files_parsed: int = 0
    cache_hits: int = 0
    prefiltered: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    sites: int = 0
    errors: int = 0
    new_errors: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Job:
    """How to run the pipeline: database, parallelism and the test hook."""

    engine: Engine
    workers: int = 0  # 0 = every core
    before_commit: Callable[[], None] | None = None


def repo_fields(repo: RepoPin) -> dict[str, Any]:
    """The repo row's columns, taken from the pins."""
    return {
        "name": repo.name,
        "git_url": repo.git_url,
        "web_url": repo.web_url,
        "pypi_name": repo.pypi_name,
        "path_prefix": repo.path_prefix,
        "launch_command": repo.launch_command,
    }


def ingest_snapshot(
    source: Source, repo: RepoPin, config: ExtractConfig, job: Job, progress: Progress | None = None
) -> SnapshotSummary:
    """Ingest one snapshot; a snapshot already in the database is skipped untouched."""
    progress = progress or NoProgress()
    started = time.perf_counter()
    info = source.snapshot()
    summary = SnapshotSummary(repo.name, info.label, info.kind, info.commit)
    if store.snapshot_exists(job.engine, repo.name, info.kind, info.commit):
        summary.status = "already ingested"
        return summary

    progress.phase(f"{info.label}: reading", None)
    with gc_paused(), Workers(job.workers) as workers:
        files = _read(source, workers)
        summary.files = len(files)
        results, summary.cache_hits, summary.files_parsed = _results(
            files, config, job, workers, progress
        )
        sites, flags, statuses = _collect(files, results, config)
        progress.phase(f"{info.label}: linking flags", len(sites))
        occurrences = link_sites(sites, flag_catalog(flags), workers, progress)
    summary.prefiltered = statuses.pop("prefiltered", 0)
    statuses.pop("ok", 0)
    summary.skipped = dict(sorted(statuses.items()))
    summary.sites = len(sites)

    progress.phase(f"{info.label}: storing", None)
    counts = {
        "files": summary.files,
        "files_parsed": summary.files_parsed,
        "cache_hits": summary.cache_hits,
        "skipped": summary.skipped,
        "sites": summary.sites,
        "seconds": round(time.perf_counter() - started, 3),
    }
    with gc_paused():
        written = store.write_snapshot(
            job.engine,
            repo=repo_fields(repo),
            info=info,
            occurrences=occurrences,
            flags=flags,
            counts=counts,
            before_commit=job.before_commit,
        )
    if written is None:  # another process completed it meanwhile
        summary.status = "already ingested"
    else:
        summary.errors, summary.new_errors = written
    summary.seconds = time.perf_counter() - started
    return summary


def _read(source: Source, workers: Workers) -> list[SourceFile]:
    """The snapshot's files; once they add up to a large snapshot, the processes start booting
    in the background, so their start-up overlaps the rest of the reading."""
    files: list[SourceFile] = []
    total = 0
    for f in source.files():
        files.append(f)
        total += len(f.data)
        if total >= WARM_BYTES and total - len(f.data) < WARM_BYTES:
            workers.warm()
    return files


def _results(
    files: Sequence[SourceFile],
    config: ExtractConfig,
    job: Job,
    workers: Workers,
    progress: Progress,
) -> tuple[dict[str, FileResult], int, int]:
    """Per-content results, from the cache or parsed now; plus (cache hits, files parsed).

    Files the byte prefilter rejects (most of a release: no exception name, no flag marker) are
    settled here, without a cache lookup or a trip to a worker.
    """
    key = extractor_key(EXTRACTOR_VERSION, config)
    results: dict[str, FileResult] = {}
    ids: dict[str, SourceFile] = {}
    for f in files:
        if f.skip is not None:
            continue
        h = cache_id(f, config)
        early = rejected(f.data, f.path, config)
        if early is not None:
            results[h] = early
        else:
            ids.setdefault(h, f)
    blobs = store.load_cache(job.engine, key, ids)
    results.update((h, decode_result(b)) for h, b in blobs.items())
    hits = sum(1 for f in files if f.skip is None and cache_id(f, config) in blobs)
    todo = {h: f for h, f in ids.items() if h not in blobs}
    units = _unit_rows(todo, config, job.engine, key, workers)
    progress.phase("parsing", len(todo))
    fresh = parse_files(todo, config, workers, progress, units)
    rows = {h: blob for h, ((_, blob), _) in fresh.items()}
    for _, unit_rows in fresh.values():
        rows.update(unit_rows)
    store.write_cache(job.engine, key, rows)
    results.update({h: r for h, ((r, _), _) in fresh.items()})
    parsed = sum(1 for (r, _), _ in fresh.values() if r.parsed)
    return results, hits, parsed


def _unit_rows(
    todo: dict[str, SourceFile], config: ExtractConfig, engine: Engine, key: str, workers: Workers
) -> dict[str, tuple[dict[str, bytes], Split]]:
    """cache id -> (the cached function-unit rows, the split) of each changed file that has any.

    Files are split in the workers first, then their units' keys looked up in one pass.
    """
    if not todo or not store.has_cached_units(engine, key):
        return {}
    files = [f for f in todo.values() if len(f.data) >= MIN_UNIT_BYTES]
    chunks = [[(f.path, f.data) for f in chunk] for chunk in _chunks(files, _limit(files, workers))]
    by_path = {f.path: h for h, f in todo.items()}
    splits: dict[str, Split] = {}
    for chunk, found in workers.map(split_chunk, chunks, config, inline=_inline(files)):
        for (path, _), split in zip(chunk, found, strict=True):
            if split is not None:
                splits[by_path[path]] = split
    rows = store.load_cache(engine, key, {k for s in splits.values() for k in s.lookups})
    return {
        h: ({k: rows[k] for k in split.lookups if k in rows}, split) for h, split in splits.items()
    }


def cache_id(f: SourceFile, config: ExtractConfig) -> str:
    """The file-cache identity: the content hash, plus the path variant when the path matters.

    Path-glob flag classes make a file's result depend on where it sits, so the same bytes at a
    matching and a non-matching path must not share one cached result.
    """
    variant = path_variant(config.flag_classes, f.path)
    return f"{f.content_hash}:{variant}" if variant else f.content_hash


def parse_files(
    todo: dict[str, SourceFile],
    config: ExtractConfig,
    workers: Workers,
    progress: Progress,
    units: dict[str, tuple[dict[str, bytes], Split]] | None = None,
) -> dict[str, tuple[tuple[FileResult, bytes], dict[str, bytes]]]:
    """Extract every file, on all cores when there is enough to parse; keyed by cache id.

    Each value is ((result, its cache blob), new function-unit cache rows); `units` holds the
    cached unit rows and the split of the files that have any (by cache id).
    """
    units = units or {}
    files = list(todo.values())
    out: dict[str, tuple[tuple[FileResult, bytes], dict[str, bytes]]] = {}
    by_path = {f.path: h for h, f in todo.items()}  # one file per cache id, so paths are unique
    chunks = [
        [(f.path, f.data, *units.get(by_path[f.path], ({}, None))) for f in chunk]
        for chunk in _chunks(files, _limit(files, workers))
    ]
    for chunk, results in workers.map(extract_chunk, chunks, config, inline=_inline(files)):
        for (path, *_), (result, blob, rows) in zip(chunk, results, strict=True):
            out[by_path[path]] = ((result, blob), rows)
        progress.advance(len(chunk))
    return out


def _limit(files: Sequence[SourceFile], workers: Workers) -> int:
    """Bytes per chunk: about six chunks per core, within bounds."""
    total = sum(len(f.data) for f in files)
    return max(64_000, min(CHUNK_BYTES, total // (workers.count * 6) + 1))


def _inline(files: Sequence[SourceFile]) -> bool:
    """True when there is too little to parse to be worth starting processes."""
    return sum(len(f.data) for f in files) < INLINE_BYTES


def link_sites(
    sites: Sequence[Site], catalog: dict[str, FlagDef], workers: Workers, progress: Progress
) -> list[tuple[Site, list[dict[str, Any]]]]:
    """Each site with the flags it involves, linked in this process.

    The read filter (`ingest.read_filter`) leaves only the few sites that read a flag to be
    analyzed: about 0.1 s for sglang 0.5.23's 9,196 sites, less than starting worker processes
    and sending each the catalog costs, so `workers` is not used.
    """
    linked = link_chunk(list(sites), catalog)
    progress.advance(len(sites))
    return linked


def _chunks(files: Sequence[SourceFile], limit: int) -> list[list[SourceFile]]:
    """Files grouped into chunks of about `limit` bytes, biggest first to balance the cores."""
    chunks: list[list[SourceFile]] = []
    current: list[SourceFile] = []
    size = 0
    for f in sorted(files, key=lambda f: -len(f.data)):
        current.append(f)
        size += len(f.data)
        if size >= limit:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def _collect(
    files: Sequence[SourceFile], results: dict[str, FileResult], config: ExtractConfig
) -> tuple[list[Site], list[FlagDef], Counter[str]]:
    """Sites and flags at each file's own path (cached results carry the first path seen)."""
    sites: list[Site] = []
    flags: list[FlagDef] = []
    statuses: Counter[str] = Counter()
    for f in files:
        if f.skip is not None:
            statuses[f.skip] += 1
            continue
        result = results[cache_id(f, config)]
        statuses[result.status] += 1
        sites.extend(s if s.path == f.path else replace(s, path=f.path) for s in result.sites)
        flags.extend(d if d.path == f.path else replace(d, path=f.path) for d in result.flags)
    return sites, flags, statuses


def flag_catalog(flags: Sequence[FlagDef]) -> dict[str, FlagDef]:
    """dest -> definition (see `ingest.flags.flag_catalog`: settings fields first, merged)."""
    return flags_catalog(flags)
