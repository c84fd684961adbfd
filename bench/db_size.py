"""Benchmark: where a SQLite knowledge base's bytes go, table by table and index by index.

Prints the vacuumed size of each knowledge base given (default: the all-release one of
`bench/all_releases.py`) and its per-table and per-index bytes from SQLite's `dbstat` virtual
table, with the row counts of the main tables; with two files, the second column is the ratio of
each to the first (the baseline), so before/after figures come from one run.

Usage: .venv/bin/python bench/db_size.py [FILE ...]
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent))

MiB = 1024 * 1024
COUNTED = (
    "occurrences",
    "site_bodies",
    "flags",
    "snapshot_flags",
    "flag_bodies",
    "file_cache",
    "errors",
)


def vacuumed(path: Path, into: Path) -> Path:
    """A vacuumed copy of the database (what it would take on disk, free pages dropped)."""
    into.unlink(missing_ok=True)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        conn.execute("VACUUM INTO ?", (str(into),))
    return into


def sizes(path: Path) -> dict[str, int]:
    """Bytes per table and index (dbstat), largest first."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    return dict(sorted(rows, key=lambda r: -r[1]))


def counts(path: Path) -> dict[str, int]:
    """Row counts of the main tables present."""
    with sqlite3.connect(path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {
            t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in COUNTED
            if t in names
        }  # noqa: S608


def main() -> None:
    """Measure each file and print them side by side."""
    files = [Path(a) for a in sys.argv[1:]]
    if not files:
        from all_releases import all_release_kb

        files = [all_release_kb()]
    with tempfile.TemporaryDirectory() as tmp:
        measured = []
        for i, f in enumerate(files):
            copy = vacuumed(f, Path(tmp) / f"{i}.sqlite3")
            measured.append((copy.stat().st_size, sizes(copy), counts(copy)))
    base_total, base_sizes, _ = measured[0]
    names = list(dict.fromkeys(n for _, s, _ in measured for n in s))
    names.sort(key=lambda n: -max(s.get(n, 0) for _, s, _ in measured))
    for i, (total, _, rows) in enumerate(measured):
        ratio = f" ({total / base_total:.3f} of the first)" if i else ""
        print(f"{files[i].name}: {total / MiB:.1f} MiB vacuumed{ratio}; rows {rows}")
    header = "".join(f"{'file ' + str(i + 1):>12}" for i in range(len(measured)))
    print(f"{'table or index':<40}{header}  (MiB)")
    for name in names:
        if max(s.get(name, 0) for _, s, _ in measured) < 0.05 * MiB:
            continue
        cells = "".join(f"{s.get(name, 0) / MiB:>12.1f}" for _, s, _ in measured)
        print(f"{name:<40}{cells}")


if __name__ == "__main__":
    main()
