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
import hashlib
import sys
import time
from pathlib import Path

# This file is in bench/: without its folder on the path, `ingest` would be bench/ingest.py.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from packaging.version import Version  # noqa: E402
from sqlalchemy import text  # noqa: E402

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.errors import SourceError  # noqa: E402
from errkb.ingest.pins import load_pins  # noqa: E402
from errkb.ingest.pipeline import Job, ingest_snapshot  # noqa: E402
from errkb.ingest.plan import pypi_planned  # noqa: E402
from errkb.ingest.sources.download import Downloads  # noqa: E402
from errkb.ingest.sources.index import PYPI_JSON, matching_versions, releases_spec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "errkb-bench"
MAX_BYTES = 2_000_000


def code_digest() -> str:
    """A hash of everything that decides the knowledge base's contents."""
    h = hashlib.sha256()
    files = [ROOT / "errkb" / "pins.toml"]
    for folder in ("errkb/core", "ingest", "migrations"):
        files += sorted((ROOT / folder).rglob("*.py"))
    for path in files:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


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
    engine = make_engine(url)
    started = time.perf_counter()
    try:
        upgrade(engine)
        pins = load_pins(ROOT / "pins.toml")
        job = Job(engine=engine)
        for version in versions:
            repo, make = pypi_planned(f"sglang=={version}", pins, None, cache, MAX_BYTES)
            source = make()
            try:
                ingest_snapshot(source, repo, repo.extract_config(MAX_BYTES), job)
            finally:
                source.close()
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        engine.dispose()
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
