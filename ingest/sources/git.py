"""Git commits: a URL or local path plus a ref, pinned to the full commit SHA.

A URL is read through a bare mirror under the cache folder into which only the pinned commits
are fetched (depth 1). Blobs are read from the object store without a checkout, and the blob SHA
is the content hash, so a blob whose result an earlier snapshot cached is recognised from the
tree alone and never read again. As pydriller does, the repo is closed and GitPython's object
cache cleared, since GitPython otherwise leaks `git cat-file` processes.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import git

from errkb.core.declared import Declared
from errkb.core.errors import SourceError
from errkb.core.records import SnapshotKind
from errkb.ingest.sources.base import (
    KNOWN_BATCH,
    KnownFiles,
    SnapshotInfo,
    SourceFile,
    date_sort_key,
)
from errkb.ingest.sources.requirements import from_pyproject

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def is_local(location: str) -> bool:
    """True when the location is a folder on this machine rather than a URL."""
    return Path(location).expanduser().exists()


def reachable(url: str, timeout: float = 10.0) -> bool:
    """True when `git ls-remote` answers within the timeout (no network must not fail a run)."""
    if is_local(url):
        return True
    try:
        proc = subprocess.run(
            ["git", "ls-remote", "--heads", url],
            capture_output=True,
            timeout=timeout,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},  # never wait on a password prompt
        )
    except (subprocess.TimeoutExpired, OSError):
        return False
    return proc.returncode == 0


def open_repo(location: str, cache_dir: Path) -> git.Repo:
    """Open a local repository, or the bare mirror of a URL under `cache_dir/git`."""
    try:
        if is_local(location):
            return git.Repo(Path(location).expanduser(), search_parent_directories=False)
        digest = hashlib.sha256(location.encode()).hexdigest()[:8]
        name = _SAFE.sub("_", location.rstrip("/").rsplit("/", 1)[-1]) or "repo"
        mirror = cache_dir / "git" / f"{name}-{digest}"
        if mirror.exists():
            return git.Repo(mirror)
        mirror.parent.mkdir(parents=True, exist_ok=True)
        return git.Repo.init(mirror, bare=True)
    except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise SourceError(f"cannot open git repository {location}: {exc}") from exc


def fetch_ref(repo: git.Repo, url: str, ref: str) -> str:
    """Fetch one ref of a URL into the mirror; returns the local name to resolve it by.

    Only the pinned commit is fetched (depth 1), so a large project's history is never cloned.
    A ref the server cannot resolve alone (an abbreviated SHA) falls back to fetching every
    branch and tag with their history.
    """
    local = f"refs/errkb/{_SAFE.sub('_', ref)}"
    try:
        repo.git.fetch("--depth=1", "--no-tags", url, f"+{ref}:{local}")
        return local
    except git.GitCommandError:
        pass
    shallow = ["--unshallow"] if (Path(repo.git_dir) / "shallow").exists() else []
    try:
        repo.git.fetch(*shallow, "--tags", url, "+refs/heads/*:refs/heads/*")
    except git.GitCommandError as exc:
        raise SourceError(f"cannot fetch {ref!r} from {url}: {exc.stderr.strip()}") from exc
    return ref


def read_blob(blob: git.Blob) -> bytes:
    """A blob's bytes, from the object store."""
    return bytes(blob.data_stream.read())


class GitSource:
    """One commit of a repository, named by any ref and pinned to its full SHA."""

    kind: SnapshotKind = "git"

    def __init__(
        self,
        location: str,
        ref: str,
        *,
        cache_dir: Path,
        web_url: str | None = None,
        max_bytes: int = 2_000_000,
        repo: git.Repo | None = None,
        path_prefix: str = "",
    ) -> None:
        self.location, self.ref = location, ref
        self.path_prefix = path_prefix
        self.web_url = web_url
        self.max_bytes = max_bytes
        self._owned = repo is None
        self.repo = repo or open_repo(location, Path(cache_dir))
        try:
            local = ref if is_local(location) else fetch_ref(self.repo, location, ref)
            self.commit = self.repo.commit(local)
        except SourceError:
            self.close()
            raise
        except (git.BadName, ValueError, git.GitCommandError) as exc:
            self.close()
            raise SourceError(f"unknown git ref {ref!r} in {location}") from exc

    def snapshot(self) -> SnapshotInfo:
        """The commit pinned to its full SHA, dated by its commit time."""
        sha = self.commit.hexsha
        date = self.commit.committed_datetime
        link_base = f"{self.web_url.rstrip('/')}/blob/{sha}/" if self.web_url else None
        return SnapshotInfo(
            label=f"{self.ref}@{sha[:10]}",
            kind=self.kind,
            ref=self.ref,
            commit=sha,
            date=date,
            link_base=link_base,
            sort_key=date_sort_key(date),
            requirements=self._requirements(),
        )

    def _requirements(self) -> tuple[Declared, ...]:
        """The dependencies of the `pyproject.toml` beside the package (at the path prefix),
        else at the top of the tree."""
        for path in dict.fromkeys((f"{self.path_prefix}pyproject.toml", "pyproject.toml")):
            try:
                blob = self.commit.tree / path
            except KeyError:
                continue
            return from_pyproject(read_blob(blob).decode("utf-8", "replace"))
        return ()

    def files(self, known: KnownFiles | None = None) -> Iterator[SourceFile]:
        """Every `.py` blob of the commit's tree, read from the object store; blobs whose SHA
        (their stored digest too) `known` answers for are not read."""
        blobs = sorted(
            (
                (str(item.path), item)
                for item in self.commit.tree.traverse()
                if isinstance(item, git.Blob) and str(item.path).endswith(".py")
            ),
            key=lambda pair: pair[0],
        )
        for start in range(0, len(blobs), KNOWN_BATCH):
            batch = blobs[start : start + KNOWN_BATCH]
            readable = [
                (path, blob.hexsha)
                for path, blob in batch
                if blob.mode != git.Blob.link_mode and blob.size <= self.max_bytes
            ]
            hashes = known(readable) if known is not None and readable else {}
            for path, blob in batch:
                sha = blob.hexsha
                if blob.mode == git.Blob.link_mode:  # a symlink's target may leave the tree
                    yield SourceFile(path, sha, b"", skip="unsafe")
                elif blob.size > self.max_bytes:
                    yield SourceFile(path, sha, b"", skip="too_large")
                elif hashes.get(sha) == sha:
                    yield SourceFile(path, sha, b"", stored=sha, known=True)
                else:
                    yield SourceFile(path, sha, read_blob(blob), stored=sha)

    def close(self) -> None:
        """Stop GitPython's helper processes and drop its caches."""
        if self._owned:
            self.repo.git.clear_cache()
            self.repo.close()

    def __enter__(self) -> GitSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
