"""Benchmark: entry sizes and database size on the all-release sglang knowledge base.

Prints, on the knowledge base of every sglang release in the cache (`bench/all_releases.py`):
- the JSON (`GET /api/errors/{id}`) and page (`GET /errors/{id}`) sizes, largest and median,
  over the errors with the most occurrences, sites and code versions plus a seeded random sample
  (`--all`: every error), and every error raised in every snapshot; goals: largest JSON
  <= 20 KB, largest page <= 300 KB;
- against the baseline of the same run, for the errors raised in every snapshot: the same JSON
  with its timeline as one point per snapshot, as entries gave it before timelines were ranges
  (snapshot, date, present, site count and, while 60 or fewer in all, its sites); goal: at most
  a third;
- against the baseline of the same run: the largest entry's occurrences listed once per
  snapshot per site in full, as entries did before site histories (all pages of
  `/api/errors/{id}/occurrences`);
- the database size now, entry docs included (built on the copy as `errkb ingest` builds them,
  unless `--no-docs`), and after migrating a copy back to one full occurrences row per snapshot
  per site (the schema before site bodies), both vacuumed; goal: now <= 1/3 of before. Migration
  0010 cannot carry the parse cache back down (it keeps hashes of its keys, not the keys), so the
  baseline is the migrated copy (at SQLite's default 4 KiB pages, as that layout's code wrote
  it) plus today's parse cache: smaller than the parse cache that layout really had, which only
  makes the ratio stricter;
- the reference error's timeline: introduced, removed, and its line moves.

Usage: .venv/bin/python bench/entry_size.py [--sample N] [--all] [--no-downgrade] [--no-docs]
                                             [--db FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from alembic import command  # noqa: E402
from all_releases import all_release_kb  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from errkb.core.db import alembic_config, make_engine, upgrade  # noqa: E402
from errkb.core.models import Error, Occurrence, Snapshot  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.service.app import create_app  # noqa: E402
from errkb.service.entries.docs import materialize_entries  # noqa: E402

REFERENCE = (  # the reference entry's error (0.5.19 also has a longer variant: another error)
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)
BEFORE_SITE_BODIES = "0003_error_flags"
KB = 1024


def vacuumed_size(path: Path, into: Path) -> int:
    """Bytes of a vacuumed copy of the SQLite database."""
    into.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("VACUUM INTO ?", (str(into),))
    return into.stat().st_size


def table_sizes(path: Path) -> dict[str, int]:
    """Bytes per table and index (SQLite's dbstat), largest first."""
    with sqlite3.connect(path) as conn:
        try:
            rows = conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:  # built without dbstat
            return {}
    return dict(sorted(rows, key=lambda r: -r[1]))


def candidates(url: str, sample: int, every: bool) -> list[str]:
    """The error ids to measure: the likely largest, plus a seeded random sample."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ids = sorted(conn.execute(select(Error.id)).scalars())
            if every:
                return ids
            picks: list[str] = []
            for expr in (
                func.count(),
                func.count(func.distinct(Occurrence.path + ":" + Occurrence.qualname)),
                func.count(func.distinct(Occurrence.body_hash)),
            ):
                picks += conn.execute(
                    select(Occurrence.error_id)
                    .group_by(Occurrence.error_id)
                    .order_by(expr.desc(), Occurrence.error_id)
                    .limit(25)
                ).scalars()
            ref = conn.execute(select(Error.id).where(Error.message == REFERENCE))
            picks += ref.scalars()
    finally:
        engine.dispose()
    return list(dict.fromkeys(picks + random.Random(14).sample(ids, min(sample, len(ids)))))


def in_every_snapshot(url: str) -> list[str]:
    """The errors raised in every ingested snapshot."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            held = conn.execute(select(func.count()).select_from(Snapshot)).scalar_one()
            return list(
                conn.execute(
                    select(Occurrence.error_id)
                    .group_by(Occurrence.error_id)
                    .having(func.count(func.distinct(Occurrence.snapshot_id)) == held)
                ).scalars()
            )
    finally:
        engine.dispose()


def with_points(url: str, error_id: str, body: bytes) -> int:
    """Bytes of the entry's JSON with `timeline.ranges` as one point per snapshot instead."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            snaps = conn.execute(
                select(Snapshot.id, Snapshot.label, Snapshot.date).order_by(Snapshot.sort_key)
            ).all()
            sites: dict[int, list[str]] = {}
            for sid, path, line in conn.execute(
                select(Occurrence.snapshot_id, Occurrence.path, Occurrence.line).where(
                    Occurrence.error_id == error_id
                )
            ):
                sites.setdefault(sid, []).append(f"{path}:{line}")
    finally:
        engine.dispose()
    present = [i for i, s in enumerate(snaps) if s.id in sites]
    points = snaps[max(0, present[0] - 1) : present[-1] + 2]
    cheap = sum(len(sites.get(s.id, [])) for s in points) <= 60
    old = [
        {
            "snapshot": s.label,
            "date": s.date.strftime("%Y-%m-%dT%H:%M:%SZ") if s.date else None,
            "present": s.id in sites,
            "site_count": len(sites.get(s.id, [])),
            "sites": sorted(sites.get(s.id, [])) if cheap else [],
        }
        for s in points
    ]
    entry = json.loads(body)
    ranges = json.dumps(entry["timeline"]["ranges"], separators=(",", ":"), ensure_ascii=False)
    listed = json.dumps(old, separators=(",", ":"), ensure_ascii=False)
    return len(body) - len(ranges.encode()) + len(listed.encode())


def fmt(n: float) -> str:
    return f"{n / KB:.1f} KB"


def describe(name: str, sizes: dict[str, int], titles: dict[str, str], goal: int) -> None:
    values = sorted(sizes.values())
    top = max(sizes, key=lambda k: sizes[k])
    print(
        f"{name}: largest {fmt(sizes[top])} ({top}, {titles[top][:60]!r}), "
        f"median {fmt(statistics.median(values))}, range {fmt(values[0])}..{fmt(values[-1])} "
        f"over {len(values)} errors; goal <= {fmt(goal)}: "
        + ("met" if sizes[top] <= goal else "MISSED")
    )


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", type=int, default=300, help="random errors for the median")
    parser.add_argument("--all", action="store_true", help="measure every error")
    parser.add_argument("--no-downgrade", action="store_true", help="skip the old-schema size")
    parser.add_argument("--no-docs", action="store_true", help="do not build the entry docs")
    parser.add_argument("--db", type=Path, help="another SQLite knowledge base to measure")
    args = parser.parse_args()

    kb = args.db or all_release_kb()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kb.sqlite3"
        shutil.copyfile(kb, db)
        url = f"sqlite:///{db}"
        settings = Settings(database_url=url, match_refresh_seconds=3600)
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
        if not args.no_docs:
            built = materialize_entries(settings)
            print(
                f"entry docs: {built.entries} built in {built.seconds:.0f} s, "
                f"{built.compressed_bytes / KB / KB:.1f} MB stored"
                + (" (already current)" if built.skipped else "")
            )
        every = in_every_snapshot(url)
        ids = list(dict.fromkeys(candidates(url, args.sample, args.all) + every))
        points: dict[str, int] = {}
        json_sizes: dict[str, int] = {}
        page_sizes: dict[str, int] = {}
        titles: dict[str, str] = {}
        reference = None
        with TestClient(create_app(settings)) as client:
            for eid in ids:
                answer = client.get(f"/api/errors/{eid}")
                answer.raise_for_status()
                json_sizes[eid] = len(answer.content)
                if eid in every:
                    points[eid] = with_points(url, eid, answer.content)
                body = answer.json()
                titles[eid] = body["title"]
                if body["message"] == REFERENCE:
                    reference = body
                page = client.get(f"/errors/{eid}")
                page.raise_for_status()
                page_sizes[eid] = len(page.content)
            largest = max(json_sizes, key=lambda k: json_sizes[k])
            old = len(client.get(f"/api/errors/{largest}").content)
            cursor: str | None = "0"
            listed = 0
            while cursor is not None:  # every occurrence in full, as entries listed them before
                got = client.get(f"/api/errors/{largest}/occurrences?limit=200&cursor={cursor}")
                got.raise_for_status()
                listed += len(got.content)
                cursor = got.json()["next_cursor"]
            old += listed

        print(f"knowledge base: {kb.name}, {len(ids)} errors measured")
        describe("entry JSON", json_sizes, titles, 20 * KB)
        if every:
            describe("raised in every snapshot", {k: json_sizes[k] for k in every}, titles, 20 * KB)
            ratios = sorted(json_sizes[k] / points[k] for k in every)
            print(
                f"baseline, same run: those {len(every)} entries with a timeline point per "
                f"snapshot: median {fmt(statistics.median(points.values()))}, largest "
                f"{fmt(max(points.values()))}; ratio served / baseline median "
                f"{statistics.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f}), "
                f"{sum(r <= 1 / 3 for r in ratios)} of {len(ratios)} at most a third"
            )
        describe("entry page", page_sizes, titles, 300 * KB)
        print(
            f"baseline, same run: the largest entry ({largest}) with every occurrence in full "
            f"would be {fmt(old)}; served {fmt(json_sizes[largest])} "
            f"(ratio {json_sizes[largest] / old:.3f})"
        )

        now = vacuumed_size(db, Path(tmp) / "now.sqlite3")
        print(f"database now: {now / KB / KB:.1f} MiB, {now / 1e6:.1f} MB (vacuumed)")
        tables = table_sizes(Path(tmp) / "now.sqlite3")
        for name, size in list(tables.items())[:8]:
            print(f"  {name}: {size / KB / KB:.1f} MiB")
        if not args.no_downgrade:
            engine = make_engine(url)
            command.downgrade(alembic_config(engine), BEFORE_SITE_BODIES)
            engine.dispose()
            with sqlite3.connect(db) as conn:  # that layout's code wrote SQLite's default pages
                conn.execute("PRAGMA journal_mode=DELETE")
                conn.execute("PRAGMA page_size=4096")
                conn.execute("VACUUM")
            copy = vacuumed_size(db, Path(tmp) / "before.sqlite3")
            before = copy + tables.get("file_cache", 0)
            print(
                f"database with one full occurrence row per snapshot per site (migrated back to "
                f"{BEFORE_SITE_BODIES}, vacuumed, 4 KiB pages: {copy / KB / KB:.1f} MiB, plus "
                f"today's parse "
                f"cache, which the migration cannot carry back; that layout's own code wrote "
                f"294 MB): {before / KB / KB:.1f} MiB; ratio now/before {now / before:.3f} "
                f"(goal <= 0.333)"
            )

    if reference is not None:
        tl = reference["timeline"]
        print(
            f"reference error {reference['id']}: introduced in {tl['introduced_in']}, "
            f"removed in {tl['removed_in']}; present in {', '.join(tl['present_in'])}"
        )
        for site in reference["sites"]:
            moves = "; ".join(
                f"line {r['line']} in {r['from_snapshot']}..{r['to_snapshot']}"
                for r in site["lines"]
            )
            print(f"  {site['path']} {site['function']}: {moves}")


if __name__ == "__main__":
    main()
