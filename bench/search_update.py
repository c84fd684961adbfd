"""Benchmark: which errors a stored snapshot gives a new path or function (the search index's
update at every ingest, `errkb.core.search.update._gained_places`), against the baseline of one
EXISTS probe per occurrence into its error's other occurrences (the query before 2026-12-07).

On a knowledge base of many releases (`--db`, a SQLite file; the newest `--snapshots` of them
are measured), times both for each snapshot, alternating which runs first, checks that both
give the same errors, and prints the seconds of each and the ratio now / baseline (median and
range over the snapshots). On the whole sglang history the baseline took 40-70 s of the storing
of each late release.

Usage: .venv/bin/python bench/search_update.py --db FILE [--snapshots N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

from sqlalchemy import Connection, exists, literal, or_, select, text  # noqa: E402
from sqlalchemy.orm import aliased  # noqa: E402

from errkb.core.db import make_engine  # noqa: E402
from errkb.core.models import Occurrence  # noqa: E402
from errkb.core.search.update import _gained_places  # noqa: E402


def probed(conn: Connection, snapshot_id: int) -> set[str]:
    """The baseline: the same errors, one EXISTS probe per occurrence of the snapshot."""
    new, old = aliased(Occurrence), aliased(Occurrence)

    def elsewhere(*columns: str) -> Any:
        return exists(
            select(literal(1)).where(
                old.error_id == new.error_id,
                old.snapshot_id != snapshot_id,
                *(getattr(old, c) == getattr(new, c) for c in columns),
            )
        )

    stmt = select(new.error_id).where(
        new.snapshot_id == snapshot_id,
        ~elsewhere("path", "qualname"),
        or_(~elsewhere("path"), ~elsewhere("qualname")),
    )
    return set(conn.execute(stmt.distinct()).scalars())


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True, help="a SQLite knowledge base")
    parser.add_argument("--snapshots", type=int, default=3, help="the newest N snapshots")
    args = parser.parse_args()
    engine = make_engine(f"sqlite:///{args.db}")
    ratios, now_s, base_s = [], [], []
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT id, label FROM snapshots ORDER BY id DESC LIMIT :n"), {"n": args.snapshots}
        ).all()
        for i, (sid, label) in enumerate(rows):
            order = [("now", _gained_places), ("baseline", probed)]
            timed: dict[str, tuple[float, set[str]]] = {}
            for name, fn in order if i % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                got = fn(conn, sid)
                timed[name] = (time.perf_counter() - started, got)
            (now, a), (base, b) = timed["now"], timed["baseline"]
            if a != b:
                raise SystemExit(f"{label}: the two ways differ ({len(a)} against {len(b)})")
            print(f"{label}: {len(a)} errors gain a place; now {now:.2f} s, baseline {base:.2f} s")
            now_s.append(now)
            base_s.append(base)
            ratios.append(now / base)
    engine.dispose()
    print(
        f"now {statistics.median(now_s):.2f} s ({min(now_s):.2f}-{max(now_s):.2f}), baseline "
        f"{statistics.median(base_s):.2f} s ({min(base_s):.2f}-{max(base_s):.2f}); ratio "
        f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) over "
        f"{len(ratios)} snapshots"
    )


if __name__ == "__main__":
    main()
