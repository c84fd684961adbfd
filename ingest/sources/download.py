"""Release archives fetched by URL from the package index, checked against its sha256.

This replaces `pip download`, which prepares an sdist's metadata by running the project's build
backend: here a release's archive is only ever transferred and hashed, never built or run. A
file is written under a temporary name and renamed into the cache folder once its hash is
right, so the cache never holds a partial or forged archive.

`Downloads` fetches the releases of an ingest on a few threads, ahead of the parser, so the
network time of release N+1 overlaps the parsing of release N.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

import httpx
from packaging.utils import canonicalize_name

from errkb.core.errors import SourceError
from errkb.ingest.sources.index import (
    ARCHIVE_SUFFIXES,
    PYPI_JSON,
    IndexFile,
    chosen_file,
    client,
    project_releases,
    release_files,
)
from errkb.ingest.sources.simple import simple_releases

_CHUNK = 1 << 20


def _dist_prefixes(name: str, version: str) -> list[str]:
    canon = canonicalize_name(name)
    names = {canon.replace("-", "_"), canon, name, name.replace("-", "_")}
    return [f"{n}-{version}" for n in names]


def cached_archive(name: str, version: str, cache_dir: Path) -> Path | None:
    """An archive of this release already in the cache folder, wheels first."""
    if not cache_dir.is_dir():
        return None
    prefixes = [p.lower() for p in _dist_prefixes(name, version)]
    found = [
        p
        for p in sorted(cache_dir.iterdir())
        if p.name.lower().endswith(ARCHIVE_SUFFIXES)
        and any(
            p.name.lower().startswith(pre + sep)
            for pre in prefixes
            for sep in ("-", ".tar", ".zip")
        )
    ]
    wheels = [p for p in found if p.suffix == ".whl"]
    return (wheels or found)[0] if found else None


def download(
    name: str,
    version: str,
    cache_dir: Path,
    *,
    index_url: str = PYPI_JSON,
    http: httpx.Client | None = None,
    listing: dict[str, list[IndexFile]] | None = None,
) -> Path:
    """The archive of `name==version` in `cache_dir`: taken from the cache, or fetched
    (`listing` is the project's release listing when the caller has it)."""
    found = cached_archive(name, version, cache_dir)
    if found is not None:
        return found
    own = http is None
    http = http or client()
    try:
        chosen = chosen_file(release_files(http, index_url, name, version, listing))
        if chosen is None:
            raise SourceError(f"{name}=={version}: the package index lists no wheel or sdist")
        what = f"{name}=={version}"
        return _fetched(http, chosen, cache_dir / chosen.filename, what)
    finally:
        if own:
            http.close()


def _fetched(http: httpx.Client, chosen: IndexFile, target: Path, what: str) -> Path:
    """Stream the file to `target` through a temporary file, keeping it only if its hash
    matches; a body longer than the size the index announced is cut off and refused."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=".part-", suffix=target.name)
    except OSError as exc:
        raise SourceError(f"{what}: cannot write to {target.parent} ({exc.strerror})") from exc
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    received = 0
    try:
        with os.fdopen(fd, "wb") as out, http.stream("GET", chosen.url) as response:
            if response.status_code != 200:
                status = response.status_code
                raise SourceError(f"{what}: downloading {target.name} gave HTTP {status}")
            for chunk in response.iter_bytes(_CHUNK):
                received += len(chunk)
                if chosen.size is not None and received > chosen.size:
                    raise SourceError(f"{what}: {target.name} is larger than the index says")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != chosen.sha256:
            raise SourceError(f"{what}: {target.name} does not match the sha256 the index gives")
        tmp.chmod(0o644)  # mkstemp's 0600 would hide the cache from other users of the folder
        tmp.replace(target)
        return target
    except httpx.HTTPError as exc:
        raise SourceError(f"{what}: downloading {target.name} failed ({exc})") from exc
    except OSError as exc:  # a full disk, an unwritable cache folder
        raise SourceError(f"{what}: could not write {target.name} ({exc.strerror})") from exc
    finally:
        tmp.unlink(missing_ok=True)


class Downloads:
    """Releases fetched on a small thread pool, in the order asked, ahead of their use."""

    def __init__(
        self,
        cache_dir: Path,
        index_url: str = PYPI_JSON,
        threads: int = 2,
        *,
        simple_url: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.index_url = index_url
        self.simple_url = simple_url  # list releases through this simple API (`errkb watch`)
        self.http = client(timeout)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="download")
        self._lock = threading.Lock()
        self._listing_lock = threading.Lock()
        self._listings: dict[str, dict[str, list[IndexFile]]] = {}
        self.fetched = 0  # releases downloaded (cache hits not counted)
        self.bytes = 0
        self.seconds = 0.0  # summed over the threads

    def listing(self, name: str) -> dict[str, list[IndexFile]]:
        """The project's releases and their files, asked of the index once per ingest."""
        with self._listing_lock:  # held while asking: the threads share one answer
            known = self._listings.get(name)
            if known is None:
                if self.simple_url is not None:
                    known = simple_releases(self.http, self.simple_url, name)
                else:
                    known = project_releases(self.http, self.index_url, name)
                self._listings[name] = known
            return known

    def start(self, name: str, version: str) -> Callable[[], Path]:
        """Begin fetching a release now; the function returned waits for its archive."""
        future: Future[Path] = self._pool.submit(self._one, name, version)
        return future.result

    def _one(self, name: str, version: str) -> Path:
        found = cached_archive(name, version, self.cache_dir)
        if found is not None:
            return found
        started = time.perf_counter()
        try:
            try:
                listing: dict[str, list[IndexFile]] | None = self.listing(name)
            except SourceError:
                listing = None  # the release's own page may still answer
            path = download(
                name,
                version,
                self.cache_dir,
                index_url=self.index_url,
                http=self.http,
                listing=listing,
            )
        finally:
            with self._lock:
                self.seconds += time.perf_counter() - started
        with self._lock:
            self.fetched += 1
            self.bytes += path.stat().st_size
        return path

    def close(self) -> None:
        """Stop: queued downloads are dropped, running ones finish, the client is closed."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.http.close()

    def __enter__(self) -> Downloads:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
