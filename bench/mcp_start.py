"""Benchmark: the first `match_error` of a fresh `errkb mcp` over stdio, its match index read
from the cache folder against built at the start.

Each run starts `errkb mcp` with the SDK's stdio client, times `initialize`, then one
`match_error` at once (the first answer, which waits for the match process's index), then two
more (the next answers). The runs alternate between:
- kept: the cache folder holds the index of this knowledge base (a start before the runs wrote
  it), so the match process reads it;
- built: the cache folder's `match-index` is not private (mode 0755), so nothing is read or kept
  and the match process builds its index at every start, as every start did before the index was
  kept;
- before (with --before-errkb PATH): another install's `errkb` (say, of the commit before), in a
  fresh cache folder.
Prints every run, then the median and range of each column, and the ratio of the medians of the
first answer (kept / built, and kept / before). The load average is printed at the start and end.

Usage: .venv/bin/python bench/mcp_start.py --db URL [--runs N] [--before-errkb PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Run as a script, bench/ comes first on sys.path and bench/ingest.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from errkb.core.db import make_engine  # noqa: E402
from errkb.core.models import Error  # noqa: E402


def traceback_text(db_url: str) -> str:
    """A short traceback ending in the message of the knowledge base's longest plain title."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            title = conn.execute(
                select(Error.title)
                .where(Error.kind == "raise", Error.exception == "ValueError")
                .order_by(func.length(Error.title).desc(), Error.id)
                .limit(1)
            ).scalar_one()
    finally:
        engine.dispose()
    return f"Traceback (most recent call last):\n  ...\nValueError: {title[:300]}\n"


async def one_run(errkb: str, db_url: str, cache: Path, text: str) -> tuple[float, ...]:
    """(initialize, first match, median of the next two) in seconds, for one fresh server."""
    env = {"ERRKB_DATABASE_URL": db_url, "ERRKB_CACHE_DIR": str(cache)}
    params = StdioServerParameters(command=errkb, args=["mcp"], env=env, cwd=str(cache))
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter()
        times = []
        for _ in range(3):
            before = time.perf_counter()
            result = await client.call_tool("match_error", {"text": text})
            times.append(time.perf_counter() - before)
            if result.is_error or not result.structured_content["matches"]:
                raise SystemExit(f"match_error failed: {result.content}")
    return ready - started, times[0], statistics.median(times[1:])


def show(name: str, rows: list[tuple[float, ...]]) -> None:
    cols = list(zip(*rows, strict=True))
    parts = []
    for label, col in zip(("initialize", "first match", "next"), cols, strict=True):
        parts.append(f"{label} {statistics.median(col):.3f} s ({min(col):.3f}-{max(col):.3f})")
    print(f"{name:7} " + ", ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="a knowledge base's URL")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before-errkb", help="another install's errkb, timed as 'before'")
    args = parser.parse_args()
    text = traceback_text(args.db)
    errkb = str(BIN / "errkb")
    print(
        "load", Path("/proc/loadavg").read_text().strip() if os.path.exists("/proc/loadavg") else ""
    )
    with tempfile.TemporaryDirectory() as tmp:
        kept, built = Path(tmp, "kept"), Path(tmp, "built")
        kept.mkdir()
        (built / "match-index").mkdir(parents=True, mode=0o755)
        (built / "match-index").chmod(0o755)
        anyio.run(one_run, errkb, args.db, kept, text)  # writes the kept index
        modes = {"kept": (errkb, lambda _: kept), "built": (errkb, lambda _: built)}
        if args.before_errkb:
            modes["before"] = (args.before_errkb, lambda n: Path(tmp, f"before{n}"))
        rows: dict[str, list[tuple[float, ...]]] = {m: [] for m in modes}
        for n in range(args.runs):
            for mode, (program, folder) in modes.items():
                cache = folder(n)
                cache.mkdir(exist_ok=True)
                row = anyio.run(one_run, program, args.db, cache, text)
                rows[mode].append(row)
                print(f"run {n + 1} {mode:7} " + " ".join(f"{t:.3f}" for t in row), flush=True)
    for mode, found in rows.items():
        show(mode, found)
    firsts = {m: statistics.median(r[1] for r in found) for m, found in rows.items()}
    for other in ("built", "before"):
        if other in firsts:
            print(f"first match, kept / {other}: {firsts['kept'] / firsts[other]:.2f}x")
    print(
        "load", Path("/proc/loadavg").read_text().strip() if os.path.exists("/proc/loadavg") else ""
    )


if __name__ == "__main__":
    main()
