"""Benchmark: errkb's reads under load, against a minimal FastAPI app serving the same bodies.

Starts `errkb serve` and the baseline (`bench/serve_baseline.py`: the same response bodies from
a dict, so only the web framework's own cost) on loopback, with the same number of processes,
and drives both with the same client for a bounded time. Prints, for 1 and 4 processes:
- requests/s, p50 and p99 for entry JSON, entry page, search and match, each with its ratio to
  the baseline (goals, at every process and connection count: see GOALS);
- the latency of single cold requests (each entry asked for the first time after the server
  started on a freshly ingested knowledge base, once its matcher index is up), median and range
  (goal: p50 <= 5 ms).
Entry ids are drawn at random from --ids entries (>= 2,000). Each target runs --rounds times,
errkb and the baseline interleaved, so machine load affects both sides; ratios are medians of
the rounds with their range.

The client is `wrk` (C, with a Lua script choosing a random path per request) when installed,
else a pure-Python httpx/asyncio client (it saturates sooner: ratios then understate both).

Usage: .venv/bin/python bench/serve.py [--db URL] [--seconds S] [--rounds N] [--processes 1,4]
  [--connections 16,64]
Without --db it uses a copy of the tests' cached 4-release sglang knowledge base (built by the
real pipeline on first use, see tests/kbcache.py), with the entry docs that `errkb ingest` ends
by building, also from that cache. With --db it builds those docs first, and prints their time
and size (`--no-docs`: neither; cold requests then build their entries).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Run as a script, bench/ comes first on sys.path and bench/ingest.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

TARGETS = ("entry JSON", "entry page", "search", "match")
# Goals at every process count and connection count: the ratio to the minimal app, the p99 (ms)
# for entries and pages, the p50 (ms) for search; and no error at all.
GOALS = {"entry JSON": 0.8, "entry page": 0.6, "search": 0.3, "match": 0.3}
P99_GOAL = {"entry JSON": 50.0, "entry page": 50.0}
P50_GOAL = {"search": 10.0}
COLD_REQUESTS = 40

LUA = """
local lines = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do lines[#lines + 1] = line end
local post = os.getenv("BENCH_POST") == "1"
math.randomseed(os.time() + math.floor(os.clock() * 1000000))
request = function()
  local line = lines[math.random(#lines)]
  if post then
    return wrk.format("POST", "/api/match", {["Content-Type"] = "application/json"}, line)
  end
  return wrk.format("GET", line)
end
"""


@dataclass(frozen=True)
class Load:
    """One load run's figures."""

    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode} before answering {url}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server did not answer {url} within {timeout:.0f} s")


def wait_listening(port: int, processes: int, proc: subprocess.Popen[bytes]) -> None:
    """Wait until `processes` sockets listen on `port`: each server process listens once it has
    started, and the health check needs only one. Measuring before would time the other
    processes' start-up (imports, the matcher's index) against the first one's requests."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode} while starting")
        out = subprocess.run(
            ["ss", "-Hltn", f"( sport = :{port} )"], capture_output=True, text=True, check=True
        ).stdout
        if len(out.splitlines()) >= processes:
            return
        time.sleep(0.2)
    raise SystemExit(f"fewer than {processes} processes listen on port {port} after 300 s")


def start(
    cmd: list[str], env: dict[str, str], port: int, processes: int
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_healthy(f"http://127.0.0.1:{port}/healthz", proc)
    wait_listening(port, processes, proc)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_errkb(db_url: str, port: int, processes: int) -> subprocess.Popen[bytes]:
    cmd = [str(BIN / "errkb"), "serve", "--port", str(port), "--workers", str(processes)]
    # No access log, as the baseline (uvicorn at --log-level warning): the same server work.
    env = {
        "ERRKB_DATABASE_URL": db_url,
        "ERRKB_MATCH_REFRESH_SECONDS": "3600",
        "ERRKB_ACCESS_LOG": "false",
    }
    return start(cmd, env, port, processes)


def start_baseline(bodies: Path, port: int, processes: int) -> subprocess.Popen[bytes]:
    # The same process model as `errkb serve --workers N` (a socket per process), and the same
    # parser and event loop (httptools, uvloop; see errkb.service.server), so the ratio compares
    # the applications, not how connections reach the processes or how HTTP is parsed.
    run = (
        "from errkb.service.processes import serve_processes; "
        f"serve_processes('bench.serve_baseline:app', '127.0.0.1', {port}, {processes}, "
        "{'log_level': 'warning', 'http': 'httptools', 'loop': 'uvloop'})"
    )
    cmd = [sys.executable, "-c", run]
    if processes == 1:
        cmd = [str(BIN / "uvicorn"), "--factory", "bench.serve_baseline:app", "--port", str(port)]
        cmd += ["--log-level", "warning", "--http", "httptools", "--loop", "uvloop"]
    env = {"BASELINE_BODIES": str(bodies), "PYTHONPATH": str(ROOT)}
    return start(cmd, env, port, processes)


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(text: str) -> float:
    found = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if found is None:
        raise SystemExit(f"unreadable wrk latency {text!r}")
    value, unit = found.groups()
    return float(value) * _UNITS.get(unit, 60e3)


def wrk_load(base: str, lines: list[str], post: bool, seconds: float, conns: int) -> Load:
    """Drive `base` with wrk, each request on a random line of `lines`."""
    with tempfile.TemporaryDirectory() as tmp:
        script, paths = Path(tmp) / "bench.lua", Path(tmp) / "paths.txt"
        script.write_text(LUA)
        paths.write_text("\n".join(lines) + "\n")
        out = subprocess.run(
            ["wrk", "-t2", f"-c{conns}", f"-d{round(seconds)}s", "--latency", "-s", str(script)]
            + [base],
            env={**os.environ, "BENCH_PATHS": str(paths), "BENCH_POST": "1" if post else "0"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    dist = out.split("Latency Distribution", 1)[-1]  # not the thread stats' "+/- Stdev" column
    p50 = _ms(re.search(r"^\s*50%\s+(\S+)", dist, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s*99%\s+(\S+)", dist, re.M).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errs = re.search(r"Socket errors:.*?(\d+).*?(\d+).*?(\d+).*?(\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    errors += sum(int(g) for g in errs.groups()) if errs else 0
    return Load(rps, p50, p99, errors)


def python_load(base: str, lines: list[str], post: bool, seconds: float, conns: int) -> Load:
    """The same load from httpx on asyncio (used when wrk is not installed)."""

    async def run() -> tuple[list[float], int]:
        latencies: list[float] = []
        errors = 0
        end = time.monotonic() + seconds
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:

            async def worker() -> None:
                nonlocal errors
                while time.monotonic() < end:
                    line = random.choice(lines)
                    t = time.perf_counter()
                    if post:
                        r = await client.post(
                            "/api/match", content=line, headers={"content-type": "application/json"}
                        )
                    else:
                        r = await client.get(line)
                    latencies.append((time.perf_counter() - t) * 1000)
                    errors += r.status_code >= 400

            await asyncio.gather(*(worker() for _ in range(conns)))
        return latencies, errors

    latencies, errors = asyncio.run(run())
    latencies.sort()
    return Load(
        len(latencies) / seconds,
        latencies[len(latencies) // 2],
        latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        errors,
    )


def workload(db_url: str, n_ids: int, seed: int) -> dict[str, list[str]]:
    """Per target, the request lines: paths for GETs, JSON bodies for match."""
    from sqlalchemy import select

    from errkb.core.db import make_engine
    from errkb.core.models import Error

    engine = make_engine(db_url)
    with engine.connect() as conn:
        rows = conn.execute(select(Error.id, Error.message)).all()
    engine.dispose()
    rng = random.Random(seed)
    picked = rng.sample(rows, min(n_ids, len(rows)))
    words = [w for _, m in picked for w in re.findall(r"[A-Za-z_]{5,}", m)]
    return {
        "entry JSON": [f"/api/errors/{i}" for i, _ in picked],
        "entry page": [f"/errors/{i}" for i, _ in picked],
        "search": [f"/api/errors?q={rng.choice(words)}+{rng.choice(words)}" for _ in range(200)],
        "match": [
            json.dumps({"text": f"Traceback (most recent call last):\nValueError: {m}\n"})
            for _, m in picked[:200]
        ],
    }


def cold_latencies(base: str, paths: list[str]) -> list[float]:
    """Milliseconds of single requests, one at a time, each for an entry not yet asked for."""
    out = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for path in paths:
            t = time.perf_counter()
            r = client.get(path)
            out.append((time.perf_counter() - t) * 1000)
            r.raise_for_status()
    return out


def baseline_bodies(base: str, lines: dict[str, list[str]], dest: Path) -> None:
    """errkb's own answers, for the baseline to serve byte for byte."""
    bodies: dict[str, tuple[str, str]] = {"/healthz": ("application/json", '{"status":"ok"}')}
    with httpx.Client(base_url=base, timeout=60) as client:
        for target in ("entry JSON", "entry page", "search"):
            for path in lines[target]:
                r = client.get(path)
                bodies[path] = (r.headers["content-type"], r.text)
        r = client.post(
            "/api/match", content=lines["match"][0], headers={"content-type": "application/json"}
        )
        bodies["POST /api/match"] = (r.headers["content-type"], r.text)
    dest.write_text(json.dumps(bodies))


def build_docs(db_url: str) -> None:
    """Build the entry docs as `errkb ingest` ends by doing, and print what that cost."""
    from errkb.core.db import make_engine, upgrade
    from errkb.core.settings import Settings
    from errkb.service.entries.docs import materialize_entries

    engine = make_engine(db_url)
    upgrade(engine)
    engine.dispose()
    load = os.getloadavg()[0]
    done = materialize_entries(Settings(database_url=db_url))
    stored, raw = done.compressed_bytes / 1e6, done.json_bytes / 1e6
    print(
        f"entry docs: {done.entries} entries built in {done.seconds:.1f} s on "
        f"{os.cpu_count()} processes (load {load:.1f} before), {stored:.1f} MB stored "
        f"({raw:.1f} MB of JSON){' (already built)' if done.skipped else ''}"
    )


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def bench(
    args: argparse.Namespace, db_url: str, processes: int, connections: int, tmp: Path
) -> None:
    load = wrk_load if shutil.which("wrk") else python_load
    targets = [t for t in TARGETS if t in args.targets.split(",")]
    lines = workload(db_url, args.ids, args.seed)
    ep, bp = free_port(), free_port()
    errkb = start_errkb(db_url, ep, processes)
    try:
        # The matcher builds its index as the server starts; one match waits for it, so the
        # cold entry reads below are not measured against that start-up work.
        httpx.post(
            f"http://127.0.0.1:{ep}/api/match",
            content=lines["match"][0],
            headers={"content-type": "application/json"},
            timeout=300,
        ).raise_for_status()
        cold = cold_latencies(f"http://127.0.0.1:{ep}", lines["entry JSON"][:COLD_REQUESTS])
        bodies = tmp / f"bodies-{processes}.json"
        baseline_bodies(f"http://127.0.0.1:{ep}", lines, bodies)  # also the warm-up pass
        baseline = start_baseline(bodies, bp, processes)
        try:
            results: dict[str, dict[str, list[Load]]] = {
                t: {"errkb": [], "base": []} for t in targets
            }
            for _ in range(args.rounds):
                for target in targets:
                    post = target == "match"
                    for name, port in (("errkb", ep), ("base", bp)):
                        results[target][name].append(
                            load(
                                f"http://127.0.0.1:{port}",
                                lines[target],
                                post,
                                args.seconds,
                                connections,
                            )
                        )
        finally:
            stop(baseline)
    finally:
        stop(errkb)
    print(
        f"\n## {processes} process(es), {len(lines['entry JSON'])} entry ids, "
        f"{connections} connections, {args.seconds:g} s x {args.rounds} rounds, "
        f"client: {load.__name__.removesuffix('_load')}, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"cold single requests (entry JSON, first ask after start): p50 {spread(cold)} ms "
        f"over {len(cold)} ids (goal p50 <= 5 ms)"
    )
    print(
        f"{'target':<11} {'errkb req/s':>20} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'base req/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'ratio (range)':>20} {'errors':>6}"
    )
    for target in targets:
        mine, base = results[target]["errkb"], results[target]["base"]
        ratios = [m.rps / b.rps for m, b in zip(mine, base, strict=True)]
        verdict = _verdict(target, statistics.median(ratios), mine)
        print(
            f"{target:<11} {spread([m.rps for m in mine]):>20} "
            f"{statistics.median(m.p50_ms for m in mine):>7.2f} "
            f"{statistics.median(m.p99_ms for m in mine):>7.2f} "
            f"{statistics.median(b.rps for b in base):>10.0f} "
            f"{statistics.median(b.p50_ms for b in base):>7.2f} "
            f"{statistics.median(b.p99_ms for b in base):>7.2f} "
            f"{spread(ratios):>20} {sum(m.errors for m in mine):>6}{verdict}"
        )


def _verdict(target: str, ratio: float, mine: list[Load]) -> str:
    """ " ok", or which goals the median missed."""
    missed = []
    if ratio < GOALS[target]:
        missed.append(f"ratio < {GOALS[target]}")
    p99 = statistics.median(m.p99_ms for m in mine)
    if target in P99_GOAL and p99 > P99_GOAL[target]:
        missed.append(f"p99 > {P99_GOAL[target]:g} ms")
    p50 = statistics.median(m.p50_ms for m in mine)
    if target in P50_GOAL and p50 > P50_GOAL[target]:
        missed.append(f"p50 > {P50_GOAL[target]:g} ms")
    if sum(m.errors for m in mine):
        missed.append("errors")
    return " ok" if not missed else " missed: " + ", ".join(missed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="SQLAlchemy URL of an ingested knowledge base")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", default="16,64", help="comma-separated counts")
    parser.add_argument("--ids", type=int, default=2000)
    parser.add_argument("--processes", default="1,4")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated subset")
    parser.add_argument(
        "--no-docs",
        dest="docs",
        action="store_false",
        help="do not build the entry docs first (cold requests then build their entries)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db_url = args.db
        if not db_url:
            from kbcache import copy_kb

            # The tests' cache keeps the entry docs built for the code that derives them.
            db_url = copy_kb(tmp / "kb.sqlite3", docs=args.docs)
            if args.docs:
                print("entry docs: as the tests' knowledge-base cache stores them", flush=True)
        elif args.docs:
            build_docs(db_url)
        for processes in (int(p) for p in args.processes.split(",")):
            for connections in (int(c) for c in args.connections.split(",")):
                bench(args, db_url, processes, connections, tmp)


if __name__ == "__main__":
    main()
