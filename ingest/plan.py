"""Which snapshots an `errkb ingest` invocation means: the pins, or the sources named on the
command line, each paired with the repo configuration (prefix, links, exceptions) it uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import git
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from errkb.core.errors import BadInput
from errkb.ingest.pins import Pins, RepoPin
from errkb.ingest.sources.base import Source
from errkb.ingest.sources.download import Downloads
from errkb.ingest.sources.folder import FolderSource
from errkb.ingest.sources.git import GitSource, is_local, open_repo, reachable
from errkb.ingest.sources.index import matching_versions, releases_spec
from errkb.ingest.sources.pypi import PypiSource

Planned = tuple[RepoPin, Callable[[], Source]]  # the source is made lazily: PyPI downloads


@dataclass
class Releases:
    """How an ingest gets its PyPI releases: the index, a download pool running ahead of the
    parser, and which releases are stored already (those are neither listed nor downloaded)."""

    downloads: Downloads
    done: Callable[[str, str], bool]  # (repo name, version) -> already ingested
    skipped: Callable[[RepoPin, str], None]  # told of each release skipped that way


def pinned(
    pins: Pins,
    cache_dir: Path,
    max_bytes: int,
    notice: Callable[[str], None],
    releases: Releases | None = None,
) -> Iterator[Planned]:
    """Every pinned release, then every pinned commit whose git URL answers."""
    for repo in pins.repos:
        if repo.pypi_name:
            if releases is not None:
                wanted = repo.releases
                if isinstance(wanted, str):
                    spec = releases_spec(wanted)
                    wanted = tuple(_versions(releases, repo.pypi_name, spec))
                yield from release_planned(repo, repo.pypi_name, wanted, releases, max_bytes)
            else:
                for version in _exact(repo.releases):
                    yield repo, _pypi(repo, repo.pypi_name, version, cache_dir / "pypi", max_bytes)
        elif repo.releases:
            notice(f"{repo.name}: releases pinned but no pypi_name, skipped")
        if repo.commits and repo.git_url:
            if not reachable(repo.git_url):
                notice(f"{repo.name}: git source unreachable, skipped ({repo.git_url})")
                continue
            yield from git_planned(repo, repo.git_url, repo.commits, cache_dir, max_bytes)


def _exact(releases: tuple[str, ...] | str) -> tuple[str, ...]:
    if isinstance(releases, str):
        raise BadInput(f"releases = {releases!r} needs the package index: list the versions")
    return releases


def _versions(releases: Releases, name: str, spec: SpecifierSet) -> list[str]:
    return matching_versions(releases.downloads.listing(name), spec)


def release_planned(
    repo: RepoPin, name: str, versions: tuple[str, ...], releases: Releases, max_bytes: int
) -> Iterator[Planned]:
    """The releases not stored yet, their downloads started at once (the pool fetches them in
    order, ahead of the parser); stored ones are reported skipped and never downloaded."""
    todo = []
    for version in versions:
        if releases.done(repo.name, version):
            releases.skipped(repo, version)
        else:
            todo.append(version)
    downloads = releases.downloads
    fetches = [downloads.start(name, version) for version in todo]
    for version, fetch in zip(todo, fetches, strict=True):
        yield repo, _pypi(repo, name, version, downloads.cache_dir, max_bytes, fetch)


def _pypi(
    repo: RepoPin,
    name: str,
    version: str,
    pypi_cache: Path,
    max_bytes: int,
    fetch: Callable[[], Path] | None = None,
) -> Callable[[], Source]:
    return lambda: PypiSource(
        name,
        version,
        cache_dir=pypi_cache,
        path_prefix=repo.path_prefix,
        web_url=repo.web_url,
        tag_pattern=repo.tag_pattern,
        max_bytes=max_bytes,
        fetch=fetch,
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
        location,
        ref,
        cache_dir=cache_dir,
        web_url=repo.web_url,
        max_bytes=max_bytes,
        repo=handle,
        path_prefix=repo.path_prefix,
    )


def _requirement(spec: str) -> Requirement:
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise BadInput(f"--pypi wants name==version or name>=version, got {spec!r}") from exc
    if req.url or req.marker or req.extras:
        raise BadInput(f"--pypi wants a name and a version bound only, got {spec!r}")
    return req


def _exact_version(req: Requirement) -> str | None:
    """The one version a requirement pins (`name==1.0`), or None for a range."""
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


def _pypi_repo(req: Requirement, pins: Pins, repo_name: str | None) -> RepoPin:
    """The pins repo named, or the one whose pypi_name matches, or a plain default."""
    if repo_name:
        return pins.repo(repo_name)
    canon = canonicalize_name(req.name)
    matches = [r for r in pins.repos if r.pypi_name and canonicalize_name(r.pypi_name) == canon]
    return matches[0] if matches else RepoPin(name=req.name, pypi_name=req.name)


def pypi_planned(
    spec: str, pins: Pins, repo_name: str | None, cache_dir: Path, max_bytes: int
) -> Planned:
    """`name==version` with the pins repo whose pypi_name matches (or the one named)."""
    req = _requirement(spec)
    version = _exact_version(req)
    if version is None:
        raise BadInput(f"--pypi wants one exact version (name==version), got {spec!r}")
    repo = _pypi_repo(req, pins, repo_name)
    return repo, _pypi(repo, req.name, version, cache_dir / "pypi", max_bytes)


def pypi_spec_planned(
    spec: str, pins: Pins, repo_name: str | None, releases: Releases, max_bytes: int
) -> Iterator[Planned]:
    """`name==version`, `name>=0.4` or a bare `name` (every release): the releases it means
    that are not stored yet, downloaded ahead."""
    req = _requirement(spec)
    repo = _pypi_repo(req, pins, repo_name)
    version = _exact_version(req)
    if version is not None:
        versions: tuple[str, ...] = (version,)
    else:
        versions = tuple(_versions(releases, req.name, req.specifier))
        if not versions:
            raise BadInput(f"--pypi {spec!r}: no release on the package index matches")
    return release_planned(repo, req.name, versions, releases, max_bytes)


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
    root, label = folder_and_label(path, label, named=bool(repo_name))
    repo = pins.repo(repo_name) if repo_name else RepoPin(name=root.name)
    return repo, lambda: FolderSource(root, label, max_bytes=max_bytes)


def folder_and_label(path: Path, label: str | None, *, named: bool) -> tuple[Path, str]:
    """The folder's real path and the snapshot's label (the folder's name by default).

    BadInput, before anything is written, for a folder that cannot be reached (missing, a
    symlink loop) and for a label or, without --repo, a folder name that is not UTF-8 text: the
    database stores both as text.
    """
    try:
        root = Path(path).expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop before Python 3.13
        if isinstance(exc, FileNotFoundError):
            raise BadInput(f"there is no folder {_shown(str(path))}") from None
        loop = "loop" in str(exc).lower()
        why = "it is a symlink loop" if loop else getattr(exc, "strerror", None) or str(exc)
        raise BadInput(f"cannot read the folder {_shown(str(path))}: {why}") from None
    if not root.is_dir():
        raise BadInput(f"--dir wants a folder, and {_shown(str(path))} is not one")
    # Without --label the folder's name labels the snapshot, and without --repo it names it.
    texts = [(label or root.name, "the label" if label else "the folder's name")]
    if not named:
        texts.append((root.name, "the folder's name"))
    for text, what in texts:
        if not _is_utf8(text):
            raise BadInput(
                f"{what} {_shown(text)} is not valid UTF-8 text: give --label (and --repo) in UTF-8"
            )
    return root, label or root.name


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
        return False
    return True


def _shown(text: str) -> str:
    """Text with its undecodable bytes as \\xNN escapes, printable in one line."""
    return "'" + text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") + "'"
