"""The all-release sglang knowledge base that the size bench measures, built by the real pipeline.

Every sglang release whose archive is in the cache folder (`--download` fills it with every final
release the package index lists, through errkb's own downloader: the JSON API, each archive
checked against its sha256, nothing built or run) is ingested, oldest first, into
one SQLite file under ~/.cache/errkb-bench, keyed by a hash of the code that writes it (ingest/,
the core, migrations, the pins), so a rerun with unchanged code reuses it.

Usage: .venv/bin/python bench/all_releases.py [--download]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# This file is in bench/: without its folder on the path, `ingest` would be bench/ingest.py.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(Path(__file__).resolve().parent.parent / "tests")]  # the shared KB builder

from kbcache import code_digest, ingest_pinned_releases  # noqa: E402
from packaging.version import Version  # noqa: E402

from errkb.core.errors import SourceError  # noqa: E402
from errkb.ingest.sources.download import Downloads  # noqa: E402
from errkb.ingest.sources.index import PYPI_JSON, matching_versions, releases_spec  # noqa: E402

CACHE = Path.home() / ".cache" / "errkb-bench"


def cached_versions(cache: Path = CACHE) -> list[str]:
    """The sglang versions whose archive is in the cache folder, oldest first."""
    names = {p.name.split("-")[1] for p in (cache / "pypi").glob("sglang-*") if "-" in p.name}
    return sorted(names, key=Version)


def download_all(cache: Path = CACHE, index_url: str = PYPI_JSON) -> tuple[int, int, float]:
    """Fetch every final sglang release the index lists into the cache folder (one listing,
    two download threads, as `errkb ingest` does); (releases fetched, bytes, wall seconds).
    A release that fails is reported and the others are still fetched."""
    started = time.perf_counter()
    with Downloads(cache / "pypi", index_url) as downloads:
        versions = matching_versions(downloads.listing("sglang"), releases_spec("all"))
        waiting = [(v, downloads.start("sglang", v)) for v in versions]
        for version, wait in waiting:
            try:
                wait()
            except SourceError as exc:
                print(f"sglang=={version}: {exc.message}", file=sys.stderr)
        return downloads.fetched, downloads.bytes, time.perf_counter() - started


def ingest_all(url: str, versions: list[str], cache: Path = CACHE) -> float:
    """Ingest the versions into the database at `url`; returns the wall time in seconds."""
    started = time.perf_counter()
    ingest_pinned_releases(url, cache, tuple(versions))  # the tests' builder, one for both
    return time.perf_counter() - started


def all_release_kb(cache: Path = CACHE) -> Path:
    """The cached all-release SQLite knowledge base for the current code, built if missing."""
    versions = cached_versions(cache)
    if not versions:
        raise SystemExit(f"no sglang archive in {cache / 'pypi'}: run with --download first")
    target = cache / f"all-{code_digest()}-{len(versions)}.sqlite3"
    if not target.exists():
        partial = target.with_suffix(".building")
        for stale in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
            stale.unlink(missing_ok=True)
        seconds = ingest_all(f"sqlite:///{partial}", versions, cache)
        print(f"ingested {len(versions)} releases in {seconds:.0f} s", file=sys.stderr)
        partial.replace(target)
    return target


def main() -> None:
    """Build (or find) the all-release knowledge base and print its path."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--download", action="store_true", help="fetch every release first")
    args = parser.parse_args()
    if args.download:
        fetched, size, seconds = download_all()
        print(
            f"downloaded {fetched} releases, {size / 1e6:.0f} MB, in {seconds:.1f} s",
            file=sys.stderr,
        )
    print(all_release_kb())


if __name__ == "__main__":
    main()
