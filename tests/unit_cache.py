"""Extraction by function units against whole-file extraction on a real release pair, shared by
tests/ingest/test_extract_incremental.py (a sample of the files) and bench/extract_units.py (every
file of both releases, timed)."""

from __future__ import annotations

import hashlib
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field

from wheels import sglang_wheel

from errkb.core.records import ExtractConfig, FileResult
from errkb.ingest.extract import extract_file
from errkb.ingest.extract.incremental import extract_by_units
from errkb.ingest.extract.unit_keys import split_file

# As the default pins extract: every class, asserts, lookups (ValueError is one of them) and the
# imports of other packages.
CONFIG = ExtractConfig(
    exceptions=("*",),
    flag_classes=("ServerArgs", "*/srt/arg_groups/fields/*.py:*"),
    asserts=True,
    lookups=("params_dict",),
    own_packages=("sglang",),
)


class UnitCache:
    """An in-memory stand-in for the file cache's unit rows, counting what each call reused."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}

    def extract(self, data: bytes, path: str) -> tuple[FileResult, bool, int]:
        """(result, extracted by units?, marker units reused)."""
        split = split_file(data, path, CONFIG)
        keys = split.lookups if split is not None else []
        cached = {k: self.rows[k] for k in keys if k in self.rows}
        got = extract_by_units(data, path, CONFIG, cached, split)
        if got is None:
            return extract_file(data, path, CONFIG), False, 0
        result, rows = got
        self.rows.update(rows)
        reused = sum(1 for k in cached if k.startswith("u:"))
        return result, True, reused


def same(a: FileResult, b: FileResult) -> bool:
    return (a.status, a.sites, a.flags, a.detail, a.classes) == (
        b.status,
        b.sites,
        b.flags,
        b.detail,
        b.classes,
    )


def release_files(
    version: str, keep: Callable[[str], bool] = lambda path: True
) -> dict[str, bytes]:
    """The release's .py files at their repo paths (those `keep` accepts)."""
    with zipfile.ZipFile(sglang_wheel(version)) as wheel:
        return {
            "python/" + n: wheel.read(n)
            for n in wheel.namelist()
            if n.endswith(".py") and keep("python/" + n)
        }


def one_in(n: int) -> Callable[[str], bool]:
    """A sample of one path in `n`, chosen by a hash of the path: the same paths in every
    release, so a file and its next version are both in it or both out."""
    return lambda path: hashlib.sha1(path.encode()).digest()[0] % n == 0


@dataclass
class PairCount:
    """What a release pair's extraction by units did, and where it differed from whole files."""

    newer_files: int = 0
    by_units: int = 0  # files of the newer release extracted by units
    changed_files: int = 0  # files of the older release the newer one does not hold as they are
    changed_sites: int = 0
    reused: int = 0  # units of those changed files reused from the newer release
    differs: list[str] = field(default_factory=list)  # paths whose records differ
    # CPU seconds (for the benchmark; never asserted): by units and whole, each release
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CPU_PARTS, 0.0))


CPU_PARTS = ("newer by units", "newer whole", "older changed by units", "older changed whole")


def release_pair(newer: dict[str, bytes], older: dict[str, bytes]) -> PairCount:
    """The newer release extracted by units from an empty cache, then the older one's changed
    files reusing its units, each file's records compared with a whole-file extraction."""
    cache, count = UnitCache(), PairCount()
    seen = {hashlib.sha1(d).digest() for d in newer.values()}
    changed = {p: d for p, d in older.items() if hashlib.sha1(d).digest() not in seen}
    for release, files in (("newer", newer), ("older changed", changed)):
        for path, data in files.items():
            start = time.process_time()
            result, used, reused = cache.extract(data, path)
            middle = time.process_time()
            expected = extract_file(data, path, CONFIG)
            count.cpu[f"{release} by units"] += middle - start
            count.cpu[f"{release} whole"] += time.process_time() - middle
            if release == "newer":
                count.newer_files += 1
                count.by_units += used
            else:
                count.changed_files += 1
                count.reused += reused
                count.changed_sites += len(result.sites)
            if not same(result, expected):
                count.differs.append(path)
    return count
