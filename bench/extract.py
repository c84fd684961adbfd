"""Benchmark: per-file extraction of a whole sglang release vs a bare `ast.parse` of every file.

Prints, for sglang 0.5.23 (median of 3 interleaved rounds, one process):
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

from errkb.settings import Settings
from ingest.extract import extract_file
from ingest.records import ExtractConfig
from ingest.sources.pypi import cached_archive, download

ROUNDS = 3


def release_files(version: str) -> dict[str, bytes]:
    """Every .py member of the sglang wheel, fetched with pip into the cache when missing."""
    cache = Settings().cache_dir / "pypi"
    archive = cached_archive("sglang", version, cache) or download("sglang", version, cache)
    with zipfile.ZipFile(archive) as wheel:
        return {n: wheel.read(n) for n in wheel.namelist() if n.endswith(".py")}


def timed_parse(files: list[bytes]) -> float:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for data in files:
            ast.parse(data)
    return time.perf_counter() - start


def timed_extract(files: dict[str, bytes], config: ExtractConfig) -> float:
    start = time.perf_counter()
    for path, data in files.items():
        extract_file(data, path, config)
    return time.perf_counter() - start


def main(version: str = "0.5.23") -> None:
    files = release_files(version)
    config = ExtractConfig()
    results = {p: extract_file(d, p, config) for p, d in files.items()}
    statuses = Counter(r.status for r in results.values())
    sites = sum(len(r.sites) for r in results.values())
    parsed = [files[p] for p, r in results.items() if r.parsed]
    print(f"sglang {version}: {len(files)} files, {sites} sites, statuses {dict(statuses)}")
    parse_all, parse_kept, extract = [], [], []
    for _ in range(ROUNDS):
        parse_all.append(timed_parse(list(files.values())))
        extract.append(timed_extract(files, config))
        parse_kept.append(timed_parse(parsed))
    base, kept, ours = (statistics.median(x) for x in (parse_all, parse_kept, extract))
    print(f"ast.parse of every file        {base:7.2f} s  (median of {ROUNDS})")
    print(f"ast.parse of the parsed files  {kept:7.2f} s  ({len(parsed)} files)")
    print(f"extract_file of every file     {ours:7.2f} s")
    print(f"ratio extract / parse-all      {ours / base:7.3f}")
    print(f"ratio extract / parse-kept     {ours / kept:7.3f}  (walk + templates overhead)")


if __name__ == "__main__":
    main(*sys.argv[1:])
