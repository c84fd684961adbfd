"""Benchmark: extraction by function units on a whole sglang release pair, against whole files.

As a history is ingested newest first: the newer release (default 0.5.23) is extracted by units
from an empty unit cache, then the files of the older one (default 0.5.22) that differ, reusing
the newer release's units. Every file is also extracted whole, and every record must be equal
(`test_sglang_release_pair_by_units_equals_whole_file_extraction` checks one path in 8 of the
same pair; this checks them all). Prints CPU seconds in this one process, and the ratio by units
/ whole for each release: the newer one fills the unit cache, the older one's changed files
reuse it. Exits 1 on any difference.

Usage: .venv/bin/python bench/extract_units.py [--newer 0.5.23] [--older 0.5.22]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this folder comes first on sys.path and its ingest.py would shadow the
# `ingest` package; drop it (same as `python -P`). The comparison is the tests' own.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(ROOT / "tests"))

from unit_cache import release_files, release_pair  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--newer", default="0.5.23")
    parser.add_argument("--older", default="0.5.22")
    args = parser.parse_args()
    count = release_pair(release_files(args.newer), release_files(args.older))
    print(
        f"sglang {args.newer}: {count.newer_files} files, {count.by_units} by units; "
        f"{args.older}: {count.changed_files} changed files, {count.changed_sites} sites, "
        f"{count.reused} units reused"
    )
    for part, seconds in count.cpu.items():
        print(f"{part:<24} {seconds:8.2f} CPU s")
    for release in ("newer", "older changed"):
        units, whole = count.cpu[f"{release} by units"], count.cpu[f"{release} whole"]
        print(f"ratio by units / whole, {release:<14} {units / whole:6.3f}")
    if count.differs:
        print(f"{len(count.differs)} files differ from a whole-file extraction, first 20:")
        print("\n".join(f"  {path}" for path in count.differs[:20]))
        return 1
    print("every record equal to a whole-file extraction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
