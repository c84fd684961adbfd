"""Benchmark: the newest sglang release added to a knowledge base holding the releases before it.

A knowledge base of the N newest final releases but the newest (`--releases all`: every one)
is built once per run with the real pipeline and its entry documents. Then, in each round, on a
copy of it:
- the newest release is ingested (archive already downloaded) and the entry documents whose
  content changed are rebuilt, as `errkb ingest` does; its time and the documents rebuilt are
  the figure (goal <= 15 s, and only the changed entries). The documents out of date only by
  versions and shifted lines are left to their first request and to `errkb docs`: the
  time of that catch-up is printed beside it;
- beside a running `errkb serve` (its document keeper on, as `errkb serve` runs by default), the
  newest release is ingested with no documents built by the ingest (as `serve --ingest`, `make
  run` and a watcher beside a server do): the time from the start of the ingest until 40 of its
  entries (20 new errors and 20 older ones it raises again) have each answered 200 with it as
  their shown release, and the time until the keeper has brought every document up to date;
- the same release is ingested again and the documents built again (goal: nothing rebuilt,
  <= 3 s);
- the baseline, once after the rounds (on this loaded machine a full build takes minutes): the
  same ingest with every document rebuilt (`force`), what each ingest cost before documents
  were incremental.
It prints medians and ranges over the rounds, and the ratio incremental / baseline.

`--base FILE` reuses a SQLite knowledge base of those releases built before (by an earlier run
with `--keep-base FILE`); its documents are first brought up to date with this code.

`--served-only` runs only the rounds beside a server, without waiting for its keeper.

Usage: .venv/bin/python bench/fresh.py [--releases N|all] [--rounds N] [--download]
           [--base FILE | --keep-base FILE] [--served-only]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is in bench/: without its folder on the path, `ingest` would be bench/ingest.py.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx  # noqa: E402
from packaging.version import Version  # noqa: E402
from sqlalchemy import text  # noqa: E402

from errkb.core.db import make_engine, upgrade  # noqa: E402
from errkb.core.settings import Settings  # noqa: E402
from errkb.ingest.pins import load_pins  # noqa: E402
from errkb.ingest.pipeline import Job, ingest_snapshot  # noqa: E402
from errkb.ingest.plan import pypi_planned  # noqa: E402
from errkb.ingest.sources.download import Downloads  # noqa: E402
from errkb.ingest.sources.index import PYPI_JSON, matching_versions, releases_spec  # noqa: E402
from errkb.service.entries.docs import LAST_BUILD, Materialized, materialize_entries  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SAMPLE = 20  # new errors, and as many older ones, asked for once the release is committed
CACHE = Path.home() / ".cache" / "errkb-bench"
MAX_BYTES = 2_000_000


def releases(count: int | None, download: bool, cache: Path) -> list[str]:
    """The `count` newest final sglang releases (None: all), oldest first, their archives in
    the cache (fetched when `download`, else only those already there are used)."""
    with Downloads(cache / "pypi", PYPI_JSON) as downloads:
        if download:
            listed = matching_versions(downloads.listing("sglang"), releases_spec("all"))
            wanted = listed[-count:] if count else listed
            for wait in [downloads.start("sglang", v) for v in wanted]:
                wait()
    held = {p.name.split("-")[1] for p in (cache / "pypi").glob("sglang-*") if "-" in p.name}
    ordered = sorted(held, key=Version)
    return ordered[-count:] if count else ordered


def ingest(url: str, version: str, cache: Path) -> float:
    """Wall time of ingesting one release whose archive is in the cache."""
    pins = load_pins(ROOT / "pins.toml")
    repo, make = pypi_planned(f"sglang=={version}", pins, None, cache, MAX_BYTES)
    source = make()
    source.archive  # noqa: B018 - opened outside the timing
    engine = make_engine(url)
    try:
        upgrade(engine)
        started = time.perf_counter()
        ingest_snapshot(source, repo, repo.extract_config(MAX_BYTES), Job(engine))
        return time.perf_counter() - started
    finally:
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        engine.dispose()
        source.close()


def docs(url: str, *, force: bool = False, defer: bool = False) -> Materialized:
    """Build the entry documents (those that changed; all with `force`; with `defer`, not
    those only out of date by versions and lines)."""
    return materialize_entries(Settings(database_url=url), force=force, defer=defer)


def base_kb(versions: list[str], cache: Path, folder: Path) -> Path:
    """A knowledge base of `versions` with every entry document built."""
    path = folder / "base.sqlite3"
    url = f"sqlite:///{path}"
    started = time.perf_counter()
    for version in versions:
        ingest(url, version, cache)
    ingested = time.perf_counter() - started
    built = docs(url)
    print(
        f"base: {len(versions)} releases ({versions[0]} to {versions[-1]}) ingested in "
        f"{ingested:.0f} s, {built.entries:,} entry documents built in {built.seconds:.0f} s",
        file=sys.stderr,
    )
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(url: str, port: int) -> subprocess.Popen[bytes]:
    """`errkb serve` on the knowledge base, its document keeper looking every 2 s."""
    env = {
        **os.environ,
        "ERRKB_DATABASE_URL": url,
        "ERRKB_ACCESS_LOG": "false",
        "ERRKB_SERVE_DOCS_CHECK_SECONDS": "2",
    }
    cmd = [str(BIN / "errkb"), "serve", "--port", str(port)]
    proc = subprocess.Popen(  # noqa: S603 - our own command
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"errkb serve did not answer on port {port} within 120 s")


def _sample(url: str, label: str) -> list[str]:
    """Ids of errors the release raises: SAMPLE new ones and SAMPLE it raises again."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            newest = conn.execute(
                text("SELECT id FROM snapshots WHERE label = :l"), {"l": label}
            ).scalar_one()
            firsts = conn.execute(
                text(
                    "SELECT error_id, MIN(snapshot_id) FROM occurrences GROUP BY error_id "
                    "HAVING MAX(snapshot_id) = :n"
                ),
                {"n": newest},
            ).all()
    finally:
        engine.dispose()
    rng = random.Random(7)
    new = sorted(e for e, first in firsts if first == newest)
    old = sorted(e for e, first in firsts if first != newest)
    return rng.sample(new, min(SAMPLE, len(new))) + rng.sample(old, min(SAMPLE, len(old)))


def served(
    url: str, version: str, cache: Path, *, keeper: bool = True
) -> tuple[float, float, float]:
    """Beside a running server: seconds from the start of the ingest until the sampled entries
    answer with the release, the slowest of those first answers, and seconds until every
    document is current again (the keeper's background build; nan without `keeper`)."""
    port = _free_port()
    server = _serve(url, port)
    try:
        held = httpx.get(f"http://127.0.0.1:{port}/healthz").json()["knowledge"]["snapshots"]
        started = time.perf_counter()
        ingest(url, version, cache)
        slowest = 0.0
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for error_id in _sample(url, version):
                asked = time.perf_counter()
                answer = client.get(f"/api/errors/{error_id}")
                slowest = max(slowest, time.perf_counter() - asked)
                if answer.status_code != 200 or answer.json()["snapshot"] != version:
                    raise SystemExit(f"{error_id}: {answer.status_code}, not served from {version}")
            answered = time.perf_counter() - started
            while keeper:  # the keeper: /healthz's figures are refreshed every few seconds
                kb = client.get("/healthz").json()["knowledge"]
                if kb["snapshots"] > held and kb["docs_current"] >= kb["entries"]:
                    return answered, slowest, time.perf_counter() - started
                time.sleep(1)
            return answered, slowest, float("nan")
    finally:
        server.terminate()
        server.wait(30)


def _up_to_date(url: str) -> None:
    """Plan and build the base's documents with this code (a build normally trusts the last
    one when nothing was ingested since: forget it, so the plan runs)."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM meta WHERE key = :k"), {"k": LAST_BUILD})
    finally:
        engine.dispose()
    done = docs(url)
    print(f"base: {done.entries:,} documents rebuilt, {done.kept:,} kept", file=sys.stderr)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", default="10", help="how many newest releases, or 'all'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--download", action="store_true", help="fetch the releases first")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--base", type=Path, help="a knowledge base of all but the newest")
    parser.add_argument("--keep-base", type=Path, help="keep the base built here, for --base")
    parser.add_argument(
        "--served-only",
        action="store_true",
        help="only the release beside a running server, without waiting for its keeper",
    )
    args = parser.parse_args()
    count = None if args.releases == "all" else int(args.releases)
    versions = releases(count, args.download, args.cache)
    if len(versions) < 2:
        raise SystemExit(f"need two or more sglang archives in {args.cache / 'pypi'}: --download")
    *older, newest = versions
    added, rebuilt, again, again_rebuilt, ingests = [], [], [], [], []
    deferred, catch_up = [], []
    answered, slowest, keeper = [], [], []
    with tempfile.TemporaryDirectory(prefix="errkb-fresh-") as tmp:
        if args.base is not None:
            base = Path(tmp) / "base.sqlite3"
            shutil.copyfile(args.base, base)
            _up_to_date(f"sqlite:///{base}")
        else:
            base = base_kb(older, args.cache, Path(tmp))
            if args.keep_base is not None:
                shutil.copyfile(base, args.keep_base)
        for n in range(1, args.rounds + 1):
            beside_kb = Path(tmp) / f"served{n}.sqlite3"  # a file of its own: no WAL left over
            shutil.copyfile(base, beside_kb)
            beside = served(
                f"sqlite:///{beside_kb}", newest, args.cache, keeper=not args.served_only
            )
            answered.append(beside[0])
            slowest.append(beside[1])
            keeper.append(beside[2])
            beside_kb.unlink()
            if args.served_only:
                print(f"round {n}: served in {beside[0]:.1f} s", file=sys.stderr)
                continue
            kb = Path(tmp) / f"round{n}.sqlite3"
            shutil.copyfile(base, kb)
            url = f"sqlite:///{kb}"
            ingested = ingest(url, newest, args.cache)
            built = docs(url, defer=True)
            ingests.append(ingested)
            added.append(ingested + built.seconds)
            rebuilt.append(built.entries)
            deferred.append(built.deferred)
            later = docs(url)  # what `errkb docs` (or the server, in the background) does next
            catch_up.append(later.seconds)
            seconds = ingest(url, newest, args.cache)  # already held: skipped
            built_again = docs(url, defer=True)
            again.append(seconds + built_again.seconds)
            again_rebuilt.append(built_again.entries)
            total = built.entries + built.kept + built.deferred
            print(
                f"round {n}: {newest} added in {added[-1]:.1f} s (ingest {ingested:.1f} s, "
                f"{rebuilt[-1]:,} of {total:,} docs rebuilt in {built.seconds:.1f} s, "
                f"{built.deferred:,} left (versions and lines only), built later in "
                f"{later.seconds:.1f} s"
                f"); again {again[-1]:.1f} s ({again_rebuilt[-1]} rebuilt); beside a server: "
                f"served in {answered[-1]:.1f} s (slowest first answer "
                f"{slowest[-1] * 1000:.0f} ms), "
                f"every doc current after {keeper[-1]:.1f} s",
                file=sys.stderr,
            )
        if args.served_only:
            print(
                f"beside a running server, ingest to {2 * SAMPLE} of its entries served: "
                f"{_spread(answered)} (goal <= 15 s); slowest first answer "
                f"{statistics.median(slowest) * 1000:.0f} ms"
            )
            return
        everything = docs(url, force=True)
        full = statistics.median(ingests) + everything.seconds
        print(f"baseline: every doc rebuilt in {everything.seconds:.1f} s", file=sys.stderr)
    print(f"history: {len(older)} releases, {older[0]} to {older[-1]}; added: {newest}")
    print(f"add the newest release (ingest + changed docs): {_spread(added)} (goal <= 15 s)")
    print(
        f"  documents rebuilt: {statistics.median(rebuilt):,.0f} "
        f"(range {min(rebuilt)}-{max(rebuilt)})"
    )
    print(
        f"  left for their first request or `errkb docs` (only versions and lines moved): "
        f"{statistics.median(deferred):,.0f}, then built in {_spread(catch_up)}"
    )
    print(
        f"beside a running server, ingest to {2 * SAMPLE} of its entries served: "
        f"{_spread(answered)} (goal <= 15 s); slowest first answer "
        f"{statistics.median(slowest) * 1000:.0f} ms; every document current after "
        f"{_spread(keeper)}"
    )
    print(
        f"the same release again: {_spread(again)}, rebuilt {max(again_rebuilt)} (goal 0, <= 3 s)"
    )
    print(f"baseline, the same ingest with every document rebuilt: {full:.1f} s (one run)")
    ratio = statistics.median(added) / full
    print(f"ratio incremental / baseline: {ratio:.2f}")


if __name__ == "__main__":
    main()
