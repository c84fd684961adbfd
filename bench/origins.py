"""What the value-origin index costs per release, against parsing the release once.

For one release held by a knowledge base (default: the tests' shared one, 0.5.23), reads the
wheel's files and the release's sites, then times, in this process:
- the baseline: `ast.parse` of every file once (the least an ingest that reads every file pays);
- the index cold: every module's facts read and every site traced, nothing cached;
- the index warm: the same again with the module facts cached, as in a history ingested in one
  run (the next release shares most of its files).
Prints each time (median of `--rounds`, with the range), its ratio to the baseline, and the
share of sites in each origin class.

Usage: .venv/bin/python bench/origins.py [--db URL] [--release 0.5.23] [--rounds 1]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
import warnings
import zipfile
from collections import Counter
from pathlib import Path

from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error, Flag, Occurrence, Snapshot
from errkb.ingest.origins import snapshot_index
from errkb.ingest.origins.snapshot_origins import snapshot_origins
from errkb.ingest.pins import load_pins
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


def _timed(rounds: int, work: object) -> list[float]:
    out = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        out.append(time.perf_counter() - started)
    return out


def _said(name: str, times: list[float], base: float) -> str:
    med = statistics.median(times)
    return (
        f"{name:34} {med:7.1f} s (range {min(times):.1f}-{max(times):.1f}), "
        f"{med / base:4.2f}x the baseline"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="database URL (default: the tests' sglang knowledge base)")
    parser.add_argument("--release", default="0.5.23")
    parser.add_argument("--rounds", type=int, default=1)
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

    def index() -> list[object]:
        return list(snapshot_origins(texts, sites, flags, vocabulary, pin.flag_classes))

    def cold() -> None:
        snapshot_index._FACTS.clear()
        index()

    base = _timed(args.rounds, parse_all)
    cold_times = _timed(args.rounds, cold)
    warm_times = _timed(args.rounds, index)
    found = Counter(o.kind if o is not None else "test code" for o in index())  # type: ignore[attr-defined]
    b = statistics.median(base)
    print(f"{args.release}: {len(texts):,} files, {len(sites):,} sites")
    print(_said("baseline: ast.parse of every file", base, b))
    print(_said("origin index, cold", cold_times, b))
    print(_said("origin index, module facts cached", warm_times, b))
    for kind, n in found.most_common():
        print(f"  {kind:14} {100 * n / len(sites):5.1f}% ({n:,})")


if __name__ == "__main__":
    main()
