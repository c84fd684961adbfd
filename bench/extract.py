"""Benchmark: per-file extraction of a whole sglang release vs a bare `ast.parse` of every file.

Prints, for sglang 0.5.23 with the default pins' classes and asserts (CPU time, median of 3
interleaved rounds, one process):
- extract_file over every .py file (prefilter, parse, walk) / ast.parse of every .py file;
- extract_file / ast.parse of just the files the prefilter lets through (the walk's overhead).

Usage: .venv/bin/python bench/extract.py [VERSION]
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path

# Run as a script, this folder comes first on sys.path and its ingest.py would shadow the
# `ingest` package; drop it (same as `python -P`).
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

from errkb.core.records import ExtractConfig
from errkb.core.settings import Settings
from errkb.ingest.extract import extract_file
from errkb.ingest.pins import load_pins
from errkb.ingest.sources.pypi import cached_archive, download

ROUNDS = 3


def release_files(version: str) -> dict[str, bytes]:
    """Every .py member of the sglang wheel, fetched with pip into the cache when missing."""
    cache = Settings().cache_dir / "pypi"
    archive = cached_archive("sglang", version, cache) or download("sglang", version, cache)
    with zipfile.ZipFile(archive) as wheel:
        return {n: wheel.read(n) for n in wheel.namelist() if n.endswith(".py")}


def timed_parse(files: dict[str, bytes], kept: set[str]) -> tuple[float, float]:
    """CPU seconds of `ast.parse` over every file, and over the `kept` ones alone."""
    total = subset = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path, data in files.items():
            start = time.process_time()
            ast.parse(data)
            spent = time.process_time() - start
            total += spent
            if path in kept:
                subset += spent
    return total, subset


def timed_extract(files: dict[str, bytes], config: ExtractConfig) -> float:
    """CPU seconds of `extract_file` over every file."""
    start = time.process_time()
    for path, data in files.items():
        extract_file(data, path, config)
    return time.process_time() - start


def main(version: str = "0.5.23") -> None:
    files = release_files(version)
    # What `errkb ingest` extracts: the default pins' classes (every one) and asserts.
    config = (
        load_pins(Path(__file__).resolve().parent.parent / "pins.toml")
        .repos[0]
        .extract_config(Settings().max_file_bytes)
    )
    results = {p: extract_file(d, p, config) for p, d in files.items()}
    statuses = Counter(r.status for r in results.values())
    sites = sum(len(r.sites) for r in results.values())
    kept = {p for p, r in results.items() if r.parsed}
    del results
    print(f"sglang {version}: {len(files)} files, {sites} sites, statuses {dict(statuses)}")
    parse_all, parse_kept, extract = [], [], []
    for _ in range(ROUNDS):
        total, subset = timed_parse(files, kept)
        parse_all.append(total)
        parse_kept.append(subset)
        extract.append(timed_extract(files, config))
    base, floor, ours = (statistics.median(x) for x in (parse_all, parse_kept, extract))
    # CPU time, not wall time: other processes on a shared machine would skew wall-clock ratios.
    print(f"ast.parse of every file        {base:7.2f} CPU s  (median of {ROUNDS})")
    print(f"ast.parse of the parsed files  {floor:7.2f} CPU s  ({len(kept)} files)")
    print(f"extract_file of every file     {ours:7.2f} CPU s")
    print(f"ratio extract / parse-all      {ours / base:7.3f}")
    print(f"ratio extract / parse-kept     {ours / floor:7.3f}  (1 + walk and template overhead)")


if __name__ == "__main__":
    main(*sys.argv[1:])
