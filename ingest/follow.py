"""Following the package index: each pinned project's new releases, ingested one by one.

`errkb watch` runs one round per interval. A round lists each pinned project on the simple
index, picks the releases its pin follows that are not stored yet, and ingests them oldest
first. Whatever fails (the index does not answer, a download or a release cannot be read) is one
line in the round's failures; the release stays unstored, so the next round tries it again, and
everything stored before stays as it was (a snapshot is committed whole or not at all).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version
from sqlalchemy.exc import DBAPIError

from errkb.core.errors import ErrkbError
from errkb.ingest import store
from errkb.ingest.pins import Pins, RepoPin
from errkb.ingest.pipeline import Job, SnapshotSummary, ingest_snapshot
from errkb.ingest.plan import Releases, release_planned
from errkb.ingest.progress import NoProgress, Progress
from errkb.ingest.sources.download import Downloads
from errkb.ingest.sources.index import IndexFile, matching_versions, releases_spec


@dataclass
class Round:
    """What one round did, in lines a person reads."""

    ingested: list[SnapshotSummary] = field(default_factory=list)  # the releases stored
    current: list[str] = field(default_factory=list)  # one line per project with nothing new
    failures: list[str] = field(default_factory=list)  # one line per failure
    seconds: float = 0.0


def _newest(versions: list[str]) -> str | None:
    parsed = []
    for v in versions:
        try:
            parsed.append((Version(v), v))
        except InvalidVersion:
            continue
    return max(parsed)[1] if parsed else None


def followed_versions(pin: RepoPin, listing: dict[str, list[IndexFile]]) -> list[str]:
    """The releases of `listing` that `pin` follows, oldest first: those its bound allows, or,
    for a list of versions, those listed and every final release newer than the newest one."""
    if isinstance(pin.releases, str):
        return matching_versions(listing, releases_spec(pin.releases))
    wanted = set(pin.releases) & set(listing)
    newest = _newest(list(pin.releases))
    if newest is not None:
        wanted |= set(matching_versions(listing, SpecifierSet(f">{newest}")))
    return sorted(wanted, key=Version)


def newest_listed(listing: dict[str, list[IndexFile]]) -> str | None:
    """The newest final release of a listing."""
    versions = matching_versions(listing, SpecifierSet())
    return versions[-1] if versions else None


def follow_round(
    pins: Pins,
    job: Job,
    downloads: Downloads,
    max_bytes: int,
    progress: Progress | None = None,
) -> Round:
    """List every pinned project on the index and ingest its new releases."""
    started = time.perf_counter()
    done = Round()
    for pin in pins.repos:
        if pin.pypi_name:
            try:
                _follow(
                    pin, pin.pypi_name, job, downloads, max_bytes, progress or NoProgress(), done
                )
            except DBAPIError as exc:  # the database is down: nothing stored, tried next round
                done.failures.append(f"the database cannot be used ({type(exc.orig).__name__})")
    done.seconds = time.perf_counter() - started
    return done


def _follow(
    pin: RepoPin,
    name: str,
    job: Job,
    downloads: Downloads,
    max_bytes: int,
    progress: Progress,
    done: Round,
) -> None:
    try:
        listing = downloads.listing(name)
    except ErrkbError as exc:
        done.failures.append(exc.message)
        return
    stored = lambda version: store.snapshot_exists(job.engine, pin.name, "pypi", version)  # noqa: E731
    todo = [v for v in followed_versions(pin, listing) if not stored(v)]
    if not todo:
        newest = newest_listed(listing)
        done.current.append(f"{name}: no new release (newest on the index: {newest or 'none'})")
        return
    releases = Releases(downloads, lambda _repo, _version: False, lambda _pin, _version: None)
    for repo_pin, make_source in release_planned(pin, name, tuple(todo), releases, max_bytes):
        try:
            source = make_source()
            try:
                config = repo_pin.extract_config(max_bytes)
                summary = ingest_snapshot(source, repo_pin, config, job, progress)
            finally:
                source.close()
        except ErrkbError as exc:  # this release is tried again next round; the others go on
            done.failures.append(exc.message)
            continue
        done.ingested.append(summary)
