"""Which snapshots an `errkb ingest` invocation means: the pins, or the sources named on the
command line, each paired with the repo configuration (prefix, links, exceptions) it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import git
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from errkb.core.errors import BadInput
from errkb.ingest.pins import Pins, RepoPin
from errkb.ingest.sources.base import Source
from errkb.ingest.sources.folder import FolderSource
from errkb.ingest.sources.git import GitSource, is_local, open_repo, reachable
from errkb.ingest.sources.pypi import PypiSource

Planned = tuple[RepoPin, Callable[[], Source]]  # the source is made lazily: PyPI downloads


def pinned(
    pins: Pins, cache_dir: Path, max_bytes: int, notice: Callable[[str], None]
) -> Iterator[Planned]:
    """Every pinned release, then every pinned commit whose git URL answers."""
    for repo in pins.repos:
        if repo.pypi_name:
            for version in repo.releases:
                yield repo, _pypi(repo, repo.pypi_name, version, cache_dir, max_bytes)
        elif repo.releases:
            notice(f"{repo.name}: releases pinned but no pypi_name, skipped")
        if repo.commits and repo.git_url:
            if not reachable(repo.git_url):
                notice(f"{repo.name}: git source unreachable, skipped ({repo.git_url})")
                continue
            yield from git_planned(repo, repo.git_url, repo.commits, cache_dir, max_bytes)


def _pypi(
    repo: RepoPin, name: str, version: str, cache_dir: Path, max_bytes: int
) -> Callable[[], Source]:
    return lambda: PypiSource(
        name,
        version,
        cache_dir=cache_dir / "pypi",
        path_prefix=repo.path_prefix,
        web_url=repo.web_url,
        tag_pattern=repo.tag_pattern,
        max_bytes=max_bytes,
    )


def git_planned(
    repo: RepoPin, location: str, refs: tuple[str, ...] | list[str], cache_dir: Path, max_bytes: int
) -> Iterator[Planned]:
    """One source per ref, sharing one opened repository that is closed afterwards."""
    handle = open_repo(location, cache_dir)
    try:
        for ref in refs:
            yield repo, _git(repo, location, ref, handle, cache_dir, max_bytes)
    finally:
        handle.git.clear_cache()
        handle.close()


def _git(
    repo: RepoPin, location: str, ref: str, handle: git.Repo, cache_dir: Path, max_bytes: int
) -> Callable[[], Source]:
    return lambda: GitSource(
        location, ref, cache_dir=cache_dir, web_url=repo.web_url, max_bytes=max_bytes, repo=handle
    )


def pypi_planned(
    spec: str, pins: Pins, repo_name: str | None, cache_dir: Path, max_bytes: int
) -> Planned:
    """`name==version` with the pins repo whose pypi_name matches (or the one named)."""
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise BadInput(f"--pypi wants name==version, got {spec!r}") from exc
    pinned_versions = [s.version for s in req.specifier if s.operator in ("==", "===")]
    if len(pinned_versions) != 1 or "*" in pinned_versions[0]:
        raise BadInput(f"--pypi wants one exact version (name==version), got {spec!r}")
    if repo_name:
        repo = pins.repo(repo_name)
    else:
        canon = canonicalize_name(req.name)
        matches = [r for r in pins.repos if r.pypi_name and canonicalize_name(r.pypi_name) == canon]
        repo = matches[0] if matches else RepoPin(name=req.name, pypi_name=req.name)
    return repo, _pypi(repo, req.name, pinned_versions[0], cache_dir, max_bytes)


def _same_url(a: str, b: str) -> bool:
    def norm(u: str) -> str:
        return u.rstrip("/").removesuffix(".git").lower()

    return norm(a) == norm(b)


def git_repo_pin(location: str, pins: Pins, repo_name: str | None) -> RepoPin:
    """The repo configuration for a git location: named, matched by URL, or a plain default."""
    if repo_name:
        return pins.repo(repo_name)
    for repo in pins.repos:
        if repo.git_url and _same_url(repo.git_url, location):
            return repo
    if is_local(location):
        name = Path(location).expanduser().resolve().name
        return RepoPin(name=name)
    name = location.rstrip("/").removesuffix(".git").split(":")[-1]
    parts = [p for p in name.split("/") if p]
    return RepoPin(name="/".join(parts[-2:]) or location, git_url=location)


def dir_planned(
    path: Path, label: str | None, pins: Pins, repo_name: str | None, max_bytes: int
) -> Planned:
    """A local folder; its paths are repo paths, so no prefix is applied."""
    root = Path(path).expanduser().resolve()
    repo = pins.repo(repo_name) if repo_name else RepoPin(name=root.name)
    label = label or root.name
    return repo, lambda: FolderSource(root, label, max_bytes=max_bytes)
