"""Benchmark: every class and assert against ValueError alone, on the pinned sglang releases.

Ingests the releases of pins.toml (archives already downloaded) twice, cold (a fresh SQLite
database, so an empty file cache), once limited to ValueError (`RepoPin.only`, what
`errkb ingest --classes ValueError` does: the baseline, today's knowledge base) and once as the
pins say (every class, asserts, lookups). For each it prints, and then as a ratio of the two:
- ingest wall seconds;
- the database file's bytes (compacted), and its share of the releases' .py source bytes
  (goal <= 0.5);
- errors and sites;
- the matcher: p50 and p95 of `match_text` in process over tracebacks rendered from stored
  errors (goal p50 <= 2 ms), and the index build time;
- entry JSON: p50 of `build_entry` for the same ValueError ids in both databases ("entry GET
  unchanged").

Entry documents are not built here (issue #25 makes them incremental): this measures the parts
this change touched. The whole history (151 releases) is `bench/all_releases.py`.

Usage: .venv/bin/python bench/coverage.py [--releases 0.5.18,0.5.23] [--samples 300]

Measured 2026-12-04 18:30-18:44 on the shared 2-core machine (load average 15-18 throughout,
five other engineers' jobs running), pinned releases 0.5.18, 0.5.19, 0.5.20, 0.5.23, one run:

    figure                    ValueError   every class   ratio
    ingest_s                     119.088       520.163    4.37
    db_bytes                  36,536,320    93,831,168    2.57
    db_share_of_source             0.166         0.426    2.57   (goal <= 0.5)
    errors                         8,874        28,921    3.26
    occurrences                   25,625        85,371    3.33
    index_build_s                  8.793        24.923    2.83
    match_p50_ms                   0.761         0.759    1.00   (goal <= 2 ms)
    match_p95_ms                  30.739        29.750    0.97
    entry_p50_ms                 136.515       159.218    1.17   (build_entry, same ids)
    indexed_entries                8,860        28,770    3.25

Extraction alone (600 random files of 0.5.23, one process) is 1.5x ValueError's (6.2 s vs
4.0 s, parsing 4.7 s of it); the rest of the ingest grows with the sites (3.3x): guard chains
and their name resolution, packing the unit cache, linking and storing. The whole history
(151 releases, goal <= 300 s cold with downloads and entry docs) was not run: it takes well
over the time left on a machine this busy.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

# This file is in bench/: without its folder on the path, `ingest` would be bench/ingest.py.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from sqlalchemy import select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.models import Error, Occurrence  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.ingest import store  # noqa: E402
from errkb.ingest.pins import RepoPin, load_pins  # noqa: E402
from errkb.ingest.pipeline import Job, ingest_snapshot  # noqa: E402
from errkb.ingest.plan import pypi_planned  # noqa: E402
from errkb.service.entries.build import build_entry  # noqa: E402
from errkb.service.match.matcher import match_text  # noqa: E402
from errkb.service.match.queries import load_index  # noqa: E402


def ingest(url: str, versions: list[str], limit: tuple[str, ...] | None) -> tuple[float, int]:
    """Ingest the releases (every class, or only `limit`); (wall seconds, source bytes)."""
    settings = Settings()
    pins = load_pins(settings.resolved_pins_file)
    engine = make_engine(url)
    upgrade(engine)
    seconds, source_bytes = 0.0, 0
    try:
        for version in versions:
            repo, make = pypi_planned(
                f"sglang=={version}", pins, None, settings.cache_dir, settings.max_file_bytes
            )
            pin: RepoPin = repo.only(limit) if limit else repo
            source = make()
            archive = source.archive  # downloaded outside the timing
            with zipfile.ZipFile(archive) as zf:
                source_bytes += sum(
                    i.file_size for i in zf.infolist() if i.filename.endswith(".py")
                )
            start = time.perf_counter()
            try:
                ingest_snapshot(
                    source, pin, pin.extract_config(settings.max_file_bytes), Job(engine)
                )
            finally:
                source.close()
            seconds += time.perf_counter() - start
        store.compact(engine)
    finally:
        engine.dispose()
    return seconds, source_bytes


def tracebacks(session: Session, n: int, rng: random.Random) -> list[str]:
    """Texts as users paste them: a frame on a stored site, its line, and the message."""
    rows = session.execute(
        select(
            Error.exception, Error.message, Occurrence.path, Occurrence.line, Occurrence.qualname
        )
        .join(Occurrence, Occurrence.error_id == Error.id)
        .limit(20_000)
    ).all()
    out = []
    for exc, message, path, line, qualname in rng.sample(rows, min(n, len(rows))):
        text = message.replace("{", "<").replace("}", ">")
        out.append(
            "Traceback (most recent call last):\n"
            f'  File "/usr/lib/python3/dist-packages/{path.removeprefix("python/")}", '
            f"line {line}, in {qualname.rsplit('.', 1)[-1]}\n    raise\n{exc}: {text}\n"
        )
    return out


def measure(url: str, ids: list[str], samples: int) -> dict[str, float]:
    """Matcher and entry figures of one database."""
    engine = make_engine(url)
    try:
        start = time.perf_counter()
        index = load_index(engine)
        build = time.perf_counter() - start
        with Session(engine) as session:
            texts = tracebacks(session, samples, random.Random(7))
            times = []
            for text in texts:
                t = time.perf_counter()
                match_text(index, text)
                times.append(time.perf_counter() - t)
            entry_times = []
            for error_id in ids:
                t = time.perf_counter()
                build_entry(session, error_id)
                entry_times.append(time.perf_counter() - t)
            errors = session.scalar(select(Error.id).limit(1)) and len(index.entries)
    finally:
        engine.dispose()
    times.sort()
    return {
        "index_build_s": build,
        "match_p50_ms": 1000 * statistics.median(times),
        "match_p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
        "entry_p50_ms": 1000 * statistics.median(entry_times),
        "indexed_entries": float(errors or 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", default="", help="comma-separated (default: the pins')")
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    pins = load_pins(Settings().resolved_pins_file)
    releases = pins.repos[0].releases
    versions = args.releases.split(",") if args.releases else list(releases)
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        urls = {mode: f"sqlite:///{tmp}/{mode}.sqlite3" for mode in ("ValueError", "every")}
        for mode, url in urls.items():
            seconds, source = ingest(
                url, versions, ("ValueError",) if mode == "ValueError" else None
            )
            size = Path(url.removeprefix("sqlite:///")).stat().st_size
            engine = make_engine(url)
            with Session(engine) as session:
                errors = len(session.scalars(select(Error.id)).all())
                sites = len(session.scalars(select(Occurrence.id)).all())
            engine.dispose()
            figures[mode] = {
                "ingest_s": seconds,
                "db_bytes": size,
                "db_share_of_source": size / source,
                "errors": errors,
                "occurrences": sites,
            }
            print(f"{mode}: ingested {versions} in {seconds:.1f} s", file=sys.stderr)
        engine = make_engine(urls["ValueError"])
        with Session(engine) as session:
            ids = session.scalars(select(Error.id).order_by(Error.id)).all()
        engine.dispose()
        sample = random.Random(3).sample(list(ids), min(100, len(ids)))
        for mode, url in urls.items():
            figures[mode].update(measure(url, sample, args.samples))
    print(f"releases: {', '.join(versions)}")
    print(f"{'figure':<22}{'ValueError':>14}{'every class':>14}{'ratio':>8}")
    for key in figures["every"]:
        base, new = figures["ValueError"][key], figures["every"][key]
        ratio = new / base if base else float("nan")
        print(f"{key:<22}{base:>14,.3f}{new:>14,.3f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
