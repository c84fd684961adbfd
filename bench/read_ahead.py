"""Benchmark: a stretch of consecutive sglang releases ingested with each next release read ahead
(`ingest.read_ahead`, what `errkb ingest` does), against one release after the other.

Each round ingests the releases into an empty SQLite database with an empty origin store, in a
fresh process state (the origin index's memory forgotten), both ways, the order alternating
between rounds; the first release is ingested cold and untimed, the rest are timed (in a history
most releases find the one before them traced and stored). It prints each run's wall time, the
medians and their ratio (read ahead / one after the other), and checks that both databases hold
the same knowledge (every table but the file cache, and the origins the site bodies carry).

Usage: .venv/bin/python bench/read_ahead.py [--from 0.4.6] [--releases 10] [--rounds 2]
           [--cache FOLDER]  (a cache folder whose pypi/ holds the wheels: the releases taken)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# This file is in bench/: without its folder on the path, `ingest` would be bench/ingest.py.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(Path(__file__).resolve().parent.parent / "tests")]  # the database dump

from dbdump import dump  # noqa: E402
from packaging.version import Version  # noqa: E402
from sqlalchemy import select  # noqa: E402

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.models import SiteBody, unpacked_code  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.ingest.origins import kept  # noqa: E402
from errkb.ingest.pins import load_pins  # noqa: E402
from errkb.ingest.pipeline import Job, SnapshotSummary, ingest_snapshot  # noqa: E402
from errkb.ingest.plan import pypi_planned  # noqa: E402
from errkb.ingest.progress import NoProgress  # noqa: E402
from errkb.ingest.read_ahead import Planned, ingest_in_turn  # noqa: E402


def stretch(cache: Path, first: str, count: int) -> list[str]:
    """`count` consecutive releases from `first` on, of those whose wheel is in the cache."""
    names = {p.name.split("-")[1] for p in (cache / "pypi").glob("sglang-*.whl")}
    return sorted((v for v in names if Version(v) >= Version(first)), key=Version)[:count]


def planned(cache: Path, versions: list[str], max_bytes: int) -> list[Planned]:
    """The releases as `ingest_in_turn` takes them (`cache`: the cache folder holding pypi/),
    each archive downloaded beforehand when missing."""
    pins = load_pins(Settings().resolved_pins_file)
    out: list[Planned] = []
    for version in versions:
        repo, make = pypi_planned(f"sglang=={version}", pins, None, cache, max_bytes)
        make().archive  # download outside the timing  # noqa: B018
        out.append((repo, repo.extract_config(max_bytes), make))
    return out


def serially(job: Job, items: list[Planned]) -> None:
    """The baseline: one release after the other, as `errkb ingest` did before reading ahead."""
    for repo, config, make in items:
        source = make()
        try:
            ingest_snapshot(source, repo, config, job)
        finally:
            source.close()


def ahead(job: Job, items: list[Planned]) -> None:
    """Each next release read while the one before is traced and stored."""
    summaries: list[SnapshotSummary] = []
    ingest_in_turn(items, job, NoProgress(), summaries, lambda exc: print(exc.message))


def run(way: Callable[[Job, list[Planned]], None], items: list[Planned], folder: Path) -> float:
    """Wall seconds of one way into an empty database and origin store under `folder`, the
    first release ingested beforehand."""
    folder.mkdir(parents=True)
    engine = make_engine(f"sqlite:///{folder / 'kb.sqlite3'}")
    upgrade(engine)
    kept.forget()
    try:
        job = Job(engine, cache_dir=folder / "cache")
        serially(job, items[:1])  # the first release cold, untimed: the stretch is a history's
        started = time.perf_counter()
        way(job, items[1:])
        return time.perf_counter() - started
    finally:
        engine.dispose()


def knowledge(folder: Path) -> tuple[object, ...]:
    """What the database holds, but the file cache; the origins its site bodies carry."""
    engine = make_engine(f"sqlite:///{folder / 'kb.sqlite3'}")
    try:
        tables = {k: v for k, v in dump(engine).items() if k != "file_cache"}
        with engine.connect() as conn:
            codes = conn.execute(select(SiteBody.code)).scalars().all()
        origins = sorted(json.dumps(unpacked_code(c)["snippet"].get("origin")) for c in codes)
        return tables, origins
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="first", default="0.4.6")
    parser.add_argument("--releases", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Settings().cache_dir)
    args = parser.parse_args()
    versions = stretch(args.cache, args.first, args.releases)
    settings = Settings()
    items = planned(args.cache, versions, settings.max_file_bytes)
    print(f"sglang {versions[0]} (untimed), then {versions[1]} to {versions[-1]} timed")
    ways = {"one after the other": serially, "read ahead": ahead}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    with tempfile.TemporaryDirectory(prefix="errkb-bench-") as tmp:
        for n in range(args.rounds):
            order = list(ways) if n % 2 == 0 else list(reversed(ways))
            for name in order:
                folder = Path(tmp) / f"{n}-{name.replace(' ', '-')}"
                seconds[name].append(run(ways[name], items, folder))
                print(f"round {n + 1}, {name}: {seconds[name][-1]:.1f} s", flush=True)
            same = knowledge(Path(tmp) / f"{n}-one-after-the-other") == knowledge(
                Path(tmp) / f"{n}-read-ahead"
            )
            print(f"round {n + 1}: the same knowledge both ways: {same}")
    base, new = (statistics.median(seconds[name]) for name in ways)
    print(f"one after the other {base:.1f} s, read ahead {new:.1f} s: ratio {new / base:.2f}")


if __name__ == "__main__":
    main()
