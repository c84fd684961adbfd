"""What the value-origin index costs per release, against parsing the release once.

For one release held by a knowledge base (default: the tests' shared one, 0.5.23), reads the
wheel's files and the release's sites, then times, in this process, round by round:
- the baseline: `ast.parse` of every file once (the least an ingest that reads every file pays);
- the index cold: every file scanned, every module's facts read and every site traced, nothing
  kept from before;
- with the files kept: the same with the scans and module facts kept in this process, as in a
  history ingested in one run (the next release shares most of its files); the sites traced;
- cold on the pool: the same as cold, with the module facts of every file made at once on
  `--workers` parse processes (as the pipeline does) before the trace;
- the same traced in this one process: the sites' trace not split with a forked copy
  (`ingest/origins/split.py`), the baseline of the split;
- from the store: a fresh process's view (nothing in memory) of a store that a first run filled
  (`ingest/origin_store.py` in a temporary folder), as when the same releases go into a second
  database, or are ingested again.
Prints each time (median of `--rounds`, with the range), its ratio to the baseline, the share of
sites in each origin class, and checks that every way gives the same origins.

Usage: .venv/bin/python bench/origins.py [--db URL] [--release 0.5.23] [--rounds 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error, Flag, Occurrence, Snapshot
from errkb.ingest.origin_store import OriginStore
from errkb.ingest.origins import kept, split
from errkb.ingest.origins.snapshot_origins import snapshot_origins
from errkb.ingest.pins import load_pins
from errkb.ingest.pipeline import facts_maker
from errkb.ingest.workers import Workers
from errkb.service.entries.facts import flag_def_of, site_of

ROOT = Path(__file__).resolve().parent.parent


def _texts(release: str, prefix: str) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from wheels import sglang_wheel

    with zipfile.ZipFile(sglang_wheel(release)) as zf:
        return {
            prefix + n: zf.read(n).decode("utf-8", "replace")
            for n in zf.namelist()
            if n.endswith(".py")
        }


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _said(name: str, times: list[float], base: float) -> str:
    med = statistics.median(times)
    return (
        f"{name:36} {med:7.1f} s (range {min(times):.1f}-{max(times):.1f}), "
        f"{med / base:5.2f}x the baseline"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database URL (default: the tests' sglang knowledge base)")
    parser.add_argument("--release", default="0.5.23")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2, help="parse processes for the facts")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    url = args.db
    if url is None:
        from kbcache import sglang_kb_file

        url = f"sqlite:///{sglang_kb_file()}"
    pin = load_pins(ROOT / "errkb" / "pins.toml").repos[0]
    engine = make_engine(url)
    with session_factory(engine)() as s:
        snap = s.scalars(select(Snapshot).where(Snapshot.label == args.release)).one()
        rows = s.execute(
            select(Error, Occurrence)
            .join(Occurrence, Occurrence.error_id == Error.id)
            .where(Occurrence.snapshot_id == snap.id)
        ).all()
        sites = [site_of(e, o) for e, o in rows]
        flags = [flag_def_of(f) for f in s.scalars(select(Flag).where(Flag.snapshot_id == snap.id))]
    engine.dispose()
    texts = _texts(args.release, pin.path_prefix)
    vocabulary = pin.vocabulary()

    def parse_all() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for text in texts.values():
                try:
                    ast.parse(text)
                except SyntaxError:
                    pass

    def index(store: OriginStore | None = None, workers: Workers | None = None) -> list[object]:
        make = facts_maker(workers) if workers is not None else None
        return list(
            snapshot_origins(
                texts, sites, flags, vocabulary, pin.flag_classes, store=store, make_facts=make
            )
        )

    times: dict[str, list[float]] = {
        "base": [],
        "cold": [],
        "pool": [],
        "files": [],
        "one": [],
        "store": [],
    }
    results: dict[str, list[object]] = {}
    with tempfile.TemporaryDirectory(prefix="errkb-bench-origins-") as folder:
        for _ in range(args.rounds):
            times["base"].append(_timed(parse_all))
            kept.forget()
            times["cold"].append(_timed(lambda: results.__setitem__("cold", index())))
            kept.forget()
            with Workers(args.workers) as workers:
                workers.warm()
                run = lambda: results.__setitem__("pool", index(workers=workers))  # noqa: E731
                times["pool"].append(_timed(run))
            kept.forget("origins")  # the scans and facts stay
            times["files"].append(_timed(lambda: results.__setitem__("files", index())))
            kept.forget("origins")
            at_least, split.SPLIT_SITES = split.SPLIT_SITES, 10**9
            try:
                times["one"].append(_timed(lambda: results.__setitem__("one", index())))
            finally:
                split.SPLIT_SITES = at_least
            kept.forget()
            with OriginStore(Path(folder)) as store:
                index(store)  # fills the store (its first round only: the rest is kept)
            kept.forget()
            with OriginStore(Path(folder)) as store:
                run = lambda: results.__setitem__("store", index(store))  # noqa: E731
                times["store"].append(_timed(run))
        size = os.path.getsize(Path(folder) / "origins.sqlite3")
    found = Counter(o.kind if o is not None else "test code" for o in results["cold"])  # type: ignore[attr-defined]
    same = all(results[k] == results["cold"] for k in ("pool", "files", "one", "store"))
    b = statistics.median(times["base"])
    print(f"{args.release}: {len(texts):,} files, {len(sites):,} sites; load {os.getloadavg()}")
    print(_said("baseline: ast.parse of every file", times["base"], b))
    print(_said("origin index, cold", times["cold"], b))
    print(_said(f"  the same, facts on {args.workers} processes", times["pool"], b))
    print(_said("origin index, scans and facts kept", times["files"], b))
    one = statistics.median(times["one"])
    print(_said("  the same traced in one process", times["one"], b))
    print(f"  two processes against one: {statistics.median(times['files']) / one:.2f}x")
    print(_said("origin index, from the store", times["store"], b))
    print(f"the store: {size / 1e6:.1f} MB; the same origins every way: {same}")
    for k in ("pool", "files", "one", "store"):
        differ = [
            i for i, (a, c) in enumerate(zip(results[k], results["cold"], strict=True)) if a != c
        ]
        if differ:
            print(f"  {k}: {len(differ):,} sites differ from cold, first {sites[differ[0]].path}")
    for kind, n in found.most_common():
        print(f"  {kind:14} {100 * n / len(sites):5.1f}% ({n:,})")


if __name__ == "__main__":
    main()
