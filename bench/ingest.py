"""Benchmark: ingesting sglang releases through the real pipeline, against a bare parse.

Prints, for sglang 0.5.23 then 0.5.22 on this machine (medians of --rounds rounds):
- cold ingest of 0.5.23 into an empty SQLite database (empty file cache) wall time
  / a bare single-process `ast.parse` of every .py file of 0.5.23 (goal <= 0.6);
- ingest of 0.5.22 right after, into the same database (its unchanged files are cache hits)
  / the cold ingest (goal <= 0.35).

Usage: .venv/bin/python bench/ingest.py [--rounds N] [--workers N]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

# This file is bench/ingest.py: without its folder on the path, `ingest` is the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.ingest.pins import load_pins  # noqa: E402
from errkb.ingest.pipeline import Job, SnapshotSummary, ingest_snapshot  # noqa: E402
from errkb.ingest.plan import pypi_planned  # noqa: E402

COLD, NEXT = "0.5.23", "0.5.22"


def bare_parse_seconds(archive: Path) -> float:
    """One process parsing every .py file of the archive, files already in memory."""
    with zipfile.ZipFile(archive) as zf:
        files = [zf.read(n) for n in zf.namelist() if n.endswith(".py")]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes in scanned code
        for data in files:
            try:
                ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass
    return time.perf_counter() - start


def ingest(
    url: str, version: str, settings: Settings, workers: int
) -> tuple[float, SnapshotSummary]:
    """Wall time of ingesting one release (archive already downloaded) into the database."""
    pins = load_pins(settings.resolved_pins_file)
    repo, make = pypi_planned(
        f"sglang=={version}", pins, None, settings.cache_dir, settings.max_file_bytes
    )
    source = make()
    source.archive  # download outside the timing  # noqa: B018
    engine = make_engine(url)
    try:
        start = time.perf_counter()
        summary = ingest_snapshot(
            source, repo, repo.extract_config(settings.max_file_bytes), Job(engine, workers)
        )
        return time.perf_counter() - start, summary
    finally:
        engine.dispose()
        source.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="0 = every core")
    args = parser.parse_args()
    settings = Settings()
    parse_times, cold_times, next_times = [], [], []
    for round_no in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.sqlite3"
            engine = make_engine(url)
            upgrade(engine)
            engine.dispose()
            cold, cold_summary = ingest(url, COLD, settings, args.workers)
            warm, next_summary = ingest(url, NEXT, settings, args.workers)
        pypi = settings.cache_dir / "pypi"
        archive = next(pypi.glob(f"sglang-{COLD}-*.whl"), None) or next(
            pypi.glob(f"sglang-{COLD}*")
        )
        parse = bare_parse_seconds(archive)
        parse_times.append(parse)
        cold_times.append(cold)
        next_times.append(warm)
        print(
            f"round {round_no}: bare parse {parse:.2f}s, cold {COLD} {cold:.2f}s "
            f"({cold_summary.files_parsed} parsed, {cold_summary.sites} sites), "
            f"then {NEXT} {warm:.2f}s ({next_summary.files_parsed} parsed, "
            f"{next_summary.cache_hits} cache hits); ratios {cold / parse:.3f} {warm / cold:.3f}",
            flush=True,
        )
    parse, cold, warm = (statistics.median(t) for t in (parse_times, cold_times, next_times))
    print(f"median bare single-process ast.parse of {COLD}: {parse:.2f}s")
    print(f"median cold ingest of {COLD}: {cold:.2f}s")
    print(f"median ingest of {NEXT} after it: {warm:.2f}s")
    print(f"cold ingest / bare parse = {cold / parse:.3f}   (goal <= 0.6)")
    print(f"{NEXT} after {COLD} / cold = {warm / cold:.3f}   (goal <= 0.35)")
    # The machine's speed drifts between rounds; a round's own ratio compares times taken
    # seconds apart, so its median is the steadier figure.
    ratios = sorted(w / c for w, c in zip(next_times, cold_times, strict=True))
    print(
        f"median of the rounds' own {NEXT} / cold ratios = {statistics.median(ratios):.3f}"
        f"   (rounds: {ratios[0]:.3f} to {ratios[-1]:.3f})"
    )


if __name__ == "__main__":
    main()
