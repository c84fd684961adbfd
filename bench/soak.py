"""Soak: a real `errkb serve` under mixed load on loopback while an ingest writes to its database.

For `--seconds` (default 60), after a `--warmup`, it keeps up:
- `--matchers` (default 16) clients each posting 1 MiB of log text to /api/match, back to back;
- `--browsers` (default 4) clients cycling through entries (JSON and page), search (JSON and
  the index page) and module pages;
- one /healthz probe every 50 ms in the bench's event loop, and another in a process of its own
  (as a load balancer probes: its figure is the server's alone, not delayed by the bench's loop,
  which also drives the 20 clients);
- an `errkb ingest --dir ... --repo bench/soak` of the project's next release, restarted
  whenever it ends, started as a user starts it (the product's defaults, CPU priority
  included). As between real releases, most errors carry over and 20 are new in each (see
  `write_project`), so memory is read against a knowledge base that grows as a real one does.

It prints the error count (any non-2xx or failed request, 503s included), p50 and p99 latency per
route, /healthz p99 (goal <= 100 ms under the 1 MiB match load), the machine's load average at
the start and the end, and the server's RSS (with `--workers N`, all its processes and their
children summed) at start, after the warm-up, every sixth of the measure and at the end. Each
of these samples is taken when no match process is being renewed (after an ingest, a stale one
runs beside its replacement for a while).

The knowledge base grows while it runs (a release every minute or so, where a real project
makes one every week or two): more errors, and a longer history in every entry. So, unless
`--no-fresh`, a second server is then started on the final knowledge base, filled and warmed up
the same way, and the soaked server's memory is read against it: what the soaked server holds
beyond what the same data needs is the leak figure (goal <= 10%), apart from the raw growth.

Before the load starts, every entry's JSON and page is asked
for `--fill` times (default twice per server process), so that the entry caches hold what the
browsers ask for: their filling up to their bound is not counted as growth.
The settings that shape the figures (`ERRKB_MATCH_NICE`, `ERRKB_WORKERS_NICE`,
`ERRKB_SWITCH_INTERVAL_MS`, `ERRKB_MATCH_QUEUE`) come from the environment, so an A/B run is two
runs with different variables.

Usage: .venv/bin/python bench/soak.py [--seconds 60] [--warmup 20] [--db URL] [--files 100]
    [--seed FILE] [--workers N] [--fill N] [--no-fresh]
Without --db, a SQLite file in a temporary folder is used; a PostgreSQL URL must name an empty
database. With `--seed FILE` (SQLite only), the first version's database is copied from FILE
when it exists, and saved there after the first ingest when it does not: A/B runs then skip the
first ingest (a few minutes with its entry docs), which is not measured anyway.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import multiprocessing
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import httpx

from errkb.core.settings import Settings

CLI = [sys.executable, "-c", "from errkb.service.cli.main import main; main()"]
MIB = 1 << 20
REPO = "bench/soak"  # every release is ingested as a snapshot of this one project


def write_project(root: Path, files: int, version: int) -> Path:
    """Release `version` of a generated package of `files` modules raising 20 ValueErrors each.

    As between a project's real releases, most errors carry over: every check's condition
    changes, and one module's 20 messages are new in each release (1% of the errors with the
    default 100 files), so the knowledge base grows by a release's worth of rows, not by a
    second project's worth of errors.
    """
    folder = root / f"v{version}"
    for i in range(files):
        pkg = folder / f"pkg{i % 20}"
        pkg.mkdir(parents=True, exist_ok=True)
        since = f" since release {version}" if version > 1 and i == version % files else ""
        body = "".join(
            f"def check_{j}(value, mode):\n"
            f"    if mode == 'm{j}' and value < {j + version}:\n"
            f"        raise ValueError(\n"
            f"            f'module {i} check {j}{since} failed for {{value!r}} in {{mode}}'\n"
            f"        )\n"
            for j in range(20)
        )
        (pkg / f"mod{i}.py").write_text(body)
    return folder


def log_text(files: int, size: int = MIB - 64) -> bytes:
    """About 1 MiB of server log with an error message every few hundred lines."""
    rng = random.Random(16)
    lines: list[str] = []
    total = 0
    n = 0
    while total < size:
        n += 1
        if n % 400 == 0:
            i, j = rng.randrange(files), rng.randrange(20)
            line = f"ValueError: module {i} check {j} failed for {n} in m{j}"
        else:
            line = f"2026-12-03 12:00:{n % 60:02d} INFO request {n} served in {n % 97} ms"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines).encode()[:size]


def _own_rss_mib(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # ended meanwhile
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def rss_mib(pid: int) -> float:
    """Resident set size of a process and all its descendants (the server's processes), MiB."""
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += _own_rss_mib(current)
        todo += _children(current)
    return total


def _role(pid: int, depth: int, parent: str) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "ended"
    words = b" ".join(argv)
    if b" docs" in words or parent == "doc builder":  # the build and its pool's processes
        return "doc builder"
    if b"resource_tracker" in words:
        return "resource trackers"
    if b"forkserver" in words:  # a forked child keeps its forkserver's command line
        return "match processes" if parent == "forkservers" else "forkservers"
    return {0: "server", 1: "workers"}.get(depth, "other")


def rss_by_role(pid: int, counts: dict[str, int] | None = None) -> dict[str, float]:
    """The same sum, by what each process is (server, workers, match processes, doc builder);
    `counts`, when given, receives how many processes of each role there are."""
    roles: dict[str, float] = defaultdict(float)
    todo = [(pid, 0, "")]
    while todo:
        current, depth, parent = todo.pop()
        role = _role(current, depth, parent)
        roles[role] += _own_rss_mib(current)
        if counts is not None:
            counts[role] = counts.get(role, 0) + 1
        todo += [(c, depth + 1, role) for c in _children(current)]
    return dict(roles)


async def settled_rss(pid: int, match_processes: int, wait: float = 60) -> dict[str, float]:
    """RSS by role once no match process is being renewed: after an ingest each stale match
    process runs beside its fresh replacement for a while, and a sample taken then counts both
    (the 10-minute soak's end sample once read +22% for it, against +4% at every sixth)."""
    deadline = time.monotonic() + wait
    while True:
        counts: dict[str, int] = {}
        roles = rss_by_role(pid, counts)
        if counts.get("match processes", 0) <= match_processes or time.monotonic() > deadline:
            return roles
        await asyncio.sleep(0.5)


def without_builder(roles: dict[str, float]) -> float:
    """The RSS of every process but the background document build's."""
    return sum(v for k, v in roles.items() if k != "doc builder")


def _rows(db: str, query: str) -> list[Any]:
    """The first column of `query`'s rows, read in a connection of its own."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as conn:
        values = [row[0] for row in conn.execute(text(query))]
    engine.dispose()
    return values


def kb_size(db: str) -> tuple[int, int]:
    """(errors, snapshots) in the knowledge base now."""
    errors = _rows(db, "SELECT count(*) FROM errors")[0]
    snapshots = _rows(db, "SELECT count(*) FROM snapshots")[0]
    return int(errors), int(snapshots)


def _roles_text(roles: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.0f}" for k, v in sorted(roles.items()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Recorder:
    """Latencies per route and failures, counted only while `measuring` is set."""

    def __init__(self) -> None:
        self.measuring = False
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.examples: list[str] = []

    async def call(
        self, client: httpx.AsyncClient, route: str, method: str, url: str, **kw: object
    ) -> None:
        started = time.perf_counter()
        try:
            response = await client.request(method, url, **kw)  # type: ignore[arg-type]
            ok = 200 <= response.status_code < 300
            problem = f"{response.status_code} {url[:80]}"
        except httpx.HTTPError as exc:
            ok = False
            problem = f"{type(exc).__name__} {url[:80]}"
        elapsed = time.perf_counter() - started
        if self.measuring:
            self.latencies[route].append(elapsed)
            if not ok:
                self.errors[route] += 1
                if len(self.examples) < 5:
                    self.examples.append(problem)


async def load(
    url: str, args: argparse.Namespace, ids: list[str], rec: Recorder, stop: asyncio.Event
) -> None:
    body = log_text(args.files)
    limits = httpx.Limits(max_connections=args.matchers + args.browsers + 4)
    timeout = httpx.Timeout(120)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:

        async def matcher() -> None:
            while not stop.is_set():
                await rec.call(
                    client,
                    "POST /api/match (1 MiB)",
                    "POST",
                    "/api/match",
                    content=body,
                    headers={"content-type": "text/plain"},
                )

        async def browser(seed: int) -> None:
            rng = random.Random(seed)
            while not stop.is_set():
                error_id = rng.choice(ids)
                word = rng.choice(["check", "failed", "module", "mode", "value"])
                pkg = rng.randrange(20)
                for route, path in (
                    ("GET /api/errors/{id}", f"/api/errors/{error_id}"),
                    ("GET /errors/{id}", f"/errors/{error_id}"),
                    ("GET /api/errors?q=", f"/api/errors?q={word}"),
                    ("GET /?q=", f"/?q={word}"),
                    ("GET /modules/{path}", f"/modules/pkg{pkg}/"),
                ):
                    await rec.call(client, route, "GET", path)

        async def health() -> None:
            while not stop.is_set():
                await rec.call(client, LOOP_HEALTH, "GET", "/healthz")
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(matcher()) for _ in range(args.matchers)]
        tasks += [asyncio.create_task(browser(i)) for i in range(args.browsers)]
        tasks.append(asyncio.create_task(health()))
        await stop.wait()
        await asyncio.gather(*tasks)


async def fill_caches(url: str, ids: list[str], rounds: int, clients: int = 16) -> float:
    """Ask for every entry's JSON and page `rounds` times before the load starts, so that each
    server process's entry caches hold what the browsers will ask for: the memory measured
    after the warm-up is then not the caches filling up to their bound. Returns the seconds."""
    started = time.perf_counter()
    paths = [f"/api/errors/{i}" for i in ids] + [f"/errors/{i}" for i in ids]
    todo = [p for _ in range(rounds) for p in paths]
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:

        async def worker(start: int) -> None:
            for path in todo[start::clients]:
                await client.get(path)

        await asyncio.gather(*(worker(i) for i in range(clients)))
    return time.perf_counter() - started


def idle_health(url: str, seconds: float) -> list[float]:
    """/healthz latencies with no other load: the baseline of this machine, right now."""
    out = []
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url) as client:
        while time.monotonic() < end:
            started = time.perf_counter()
            client.get("/healthz")
            out.append(time.perf_counter() - started)
            time.sleep(0.05)
    return out


LOOP_HEALTH = "GET /healthz (bench loop)"
OWN_HEALTH = "GET /healthz (own process)"


def probe_health(port: int, measuring: Event, stop: Event, out: Any) -> None:
    """In a process of its own: GET /healthz every 50 ms; puts (latencies, failures) in `out`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    latencies: list[float] = []
    failures: list[str] = []
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            response.read()
            problem = None if response.status == 200 else f"{response.status} /healthz"
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            problem = f"{type(exc).__name__} /healthz"
        if measuring.is_set():
            latencies.append(time.perf_counter() - started)
            if problem is not None:
                failures.append(problem)
        time.sleep(0.05)
    out.put((latencies, failures))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_server(env: dict[str, str], workers: int) -> tuple[subprocess.Popen[bytes], str, int]:
    """`errkb serve` on a free port, answering /healthz; (process, base URL, port)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # --workers starts processes: the group is stopped at the end
    )
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    return server, url, port


def stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=60)


def stop_ingests(ingests: list[subprocess.Popen[bytes]]) -> None:
    for proc in ingests:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # at load 25 a nice-10 ingest may not get the CPU
            proc.kill()  # to stop in time: the figures must still be printed
            proc.wait(timeout=60)


class Releases:
    """The project's next releases, each ingested by `errkb ingest` as a user starts it."""

    def __init__(self, tmp: Path, files: int, env: dict[str, str]) -> None:
        self.tmp, self.files, self.env = tmp, files, env
        self.version = 2
        self.running: list[subprocess.Popen[bytes]] = []

    def start_next(self) -> None:
        folder = write_project(self.tmp, self.files, self.version)
        label = f"v{self.version}"
        self.running.append(
            subprocess.Popen(
                [*CLI, "ingest", "--dir", str(folder), "--label", label, "--repo", REPO],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        self.version += 1

    def last_ended(self) -> bool:
        return self.running[-1].poll() is not None


def ids_of(db: str) -> list[str]:
    return [str(i) for i in _rows(db, "SELECT id FROM errors")]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--db", default="")
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--matchers", type=int, default=16)
    parser.add_argument("--browsers", type=int, default=4)
    parser.add_argument("--seed", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=1, help="errkb serve --workers N")
    parser.add_argument(
        "--fill",
        type=int,
        default=-1,
        help="times every entry is asked for before the load (default: 2 x workers; 0: none)",
    )
    parser.add_argument(
        "--no-fresh",
        action="store_true",
        help="skip the fresh server on the final knowledge base (the growth-beyond-data figure)",
    )
    args = parser.parse_args()
    if args.seed is not None and args.db:
        parser.error("--seed is for the SQLite file of a run without --db")
    if args.fill < 0:
        args.fill = 2 * args.workers
    args.match_processes = args.workers * Settings().match_processes  # when none is renewing
    return args


def first_release(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> None:
    if args.seed is not None and args.seed.is_file():
        shutil.copyfile(args.seed, tmp / "kb.sqlite3")
        print(f"first version copied from {args.seed}", flush=True)
        return
    first = write_project(tmp, args.files, 1)
    subprocess.run(
        [*CLI, "ingest", "--dir", str(first), "--label", "v1", "--repo", REPO],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if args.seed is not None:
        shutil.copyfile(tmp / "kb.sqlite3", args.seed)


class Phase:
    """One server's run: filled caches, a warm-up with the load and an ingest beside it, then
    `seconds` measured with ingests of the next releases restarted as each ends."""

    def __init__(self, args: argparse.Namespace, db: str, releases: Releases) -> None:
        self.args, self.db, self.releases = args, db, releases
        self.rec = Recorder()
        self.loads: list[float] = []
        self.samples: list[float] = []  # RSS every sixth of the measured time
        self.marks: list[dict[str, float]] = []  # RSS by process after the warm-up, at the end
        self.sizes: list[tuple[int, int]] = []  # (errors, snapshots) at the same two times
        self.ingests_done = 0
        self.idle: list[float] = []
        self.rss_start = 0.0

    def run(self, seconds: float) -> None:
        server, url, port = start_server(self.releases.env, self.args.workers)
        try:
            self.rss_start = rss_mib(server.pid)
            self.idle = idle_health(url, seconds=5)
            ids = ids_of(self.db)
            if self.args.fill:
                took = asyncio.run(fill_caches(url, ids, self.args.fill))
                print(
                    f"caches filled: every entry (JSON and page) asked {self.args.fill} times in "
                    f"{took:.0f} s; RSS {self.rss_start:.0f} MiB before, "
                    f"{rss_mib(server.pid):.0f} MiB after",
                    flush=True,
                )
            asyncio.run(self._load(server.pid, url, port, ids, seconds))
        finally:
            stop_ingests(self.releases.running)
            stop_server(server)

    def _mark(self, roles: dict[str, float], when: str) -> None:
        self.marks.append(roles)
        self.sizes.append(kb_size(self.db))
        errors, snapshots = self.sizes[-1]
        print(
            f"RSS by process {when} (MiB): {_roles_text(roles)}; knowledge base: {errors} "
            f"errors, {snapshots} snapshots",
            flush=True,
        )

    async def _load(self, pid: int, url: str, port: int, ids: list[str], seconds: float) -> None:
        rec, args = self.rec, self.args
        stop = asyncio.Event()
        loader = asyncio.create_task(load(url, args, ids, rec, stop))
        context = multiprocessing.get_context("spawn")
        measuring, probe_stop, probe_out = context.Event(), context.Event(), context.Queue()
        prober = context.Process(target=probe_health, args=(port, measuring, probe_stop, probe_out))
        prober.start()
        self.releases.start_next()
        await asyncio.sleep(args.warmup)
        self._mark(await settled_rss(pid, args.match_processes), "after warm-up")
        self.loads.append(os.getloadavg()[0])
        rec.measuring = True
        measuring.set()
        end = time.monotonic() + seconds
        next_sample = time.monotonic() + seconds / 6
        while time.monotonic() < end:
            if self.releases.last_ended():
                self.ingests_done += 1
                self.releases.start_next()
            if time.monotonic() >= next_sample:
                roles = await settled_rss(pid, args.match_processes)
                self.samples.append(sum(roles.values()))
                print(f"RSS by process (MiB): {_roles_text(roles)}", flush=True)
                next_sample += seconds / 6
            await asyncio.sleep(0.5)
        rec.measuring = False
        measuring.clear()
        self.loads.append(os.getloadavg()[0])
        if seconds:
            self._mark(await settled_rss(pid, args.match_processes), "at the end")
        probe_stop.set()
        latencies, failures = probe_out.get()
        prober.join()
        rec.latencies[OWN_HEALTH] = latencies
        rec.errors[OWN_HEALTH] = len(failures)
        rec.examples += failures[:2]
        stop.set()
        await loader


def main() -> None:
    args = parse_args()
    settings = Settings()
    print(
        f"ERRKB_MATCH_NICE={settings.match_nice} ERRKB_WORKERS_NICE={settings.workers_nice} "
        f"ERRKB_SWITCH_INTERVAL_MS={settings.switch_interval_ms:g} "
        f"ERRKB_MATCH_QUEUE={settings.match_queue} ERRKB_MATCH_PROCESSES={settings.match_processes}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="errkb-soak-"))
    db = args.db or f"sqlite:///{tmp / 'kb.sqlite3'}"
    pins = tmp / "pins.toml"
    pins.write_text(f'[[repos]]\nname = "{REPO}"\n')
    env = {**os.environ, "ERRKB_DATABASE_URL": db, "ERRKB_PINS_FILE": str(pins)}
    print(f"database: {db.split('@')[-1]}; project: {args.files} files x 20 errors", flush=True)
    first_release(args, tmp, env)
    releases = Releases(tmp, args.files, env)
    soak = Phase(args, db, releases)
    soak.run(args.seconds)
    report(args, soak)
    if not args.no_fresh:
        print("\na fresh server on the final knowledge base, filled and warmed up the same way:")
        fresh = Phase(args, db, releases)
        fresh.run(0)
        report_fresh(soak, fresh)


def report(args: argparse.Namespace, soak: Phase) -> None:
    rec = soak.rec
    errors = sum(rec.errors.values())
    print(
        f"\n{args.seconds:.0f} s measured after a {args.warmup:.0f} s warm-up; "
        f"{args.matchers} match clients (1 MiB each), {args.browsers} browsing clients; "
        f"ingests completed while measuring: {soak.ingests_done}"
    )
    print(f"{'route':28} {'requests':>8} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for route, values in sorted(rec.latencies.items()):
        print(
            f"{route:28} {len(values):8d} {rec.errors[route]:6d} "
            f"{statistics.median(values) * 1000:8.1f} {percentile(values, 0.99) * 1000:8.1f}"
        )
    print(f"\nerrors: {errors}" + (f" (e.g. {rec.examples})" if rec.examples else ""))
    own = percentile(rec.latencies.get(OWN_HEALTH, [0.0]), 0.99)
    in_loop = percentile(rec.latencies.get(LOOP_HEALTH, [0.0]), 0.99)
    idle_p99 = percentile(soak.idle, 0.99)
    print(
        f"/healthz p99 under load (goal <= 100 ms): {own * 1000:.1f} ms from a probe process of "
        f"its own, {in_loop * 1000:.1f} ms from the bench's event loop; idle, same run: "
        f"p50 {statistics.median(soak.idle) * 1000:.1f} ms, p99 {idle_p99 * 1000:.1f} ms; "
        f"ratio of p99s (own process / idle) {own / idle_p99:.1f}x"
    )
    print(
        f"machine load average (1 min): {soak.loads[0]:.1f} when measuring began, "
        f"{soak.loads[1]:.1f} at the end, on {os.cpu_count()} cores"
    )
    rss_warm, rss_end = (sum(m.values()) for m in soak.marks)
    growth = rss_end - rss_warm
    print(
        f"server RSS ({args.workers} process(es) and their children, sampled when no match "
        f"process was being renewed): start {soak.rss_start:.0f} MiB, after warm-up "
        f"{rss_warm:.0f} MiB, end {rss_end:.0f} MiB; growth after warm-up {growth:+.0f} MiB, "
        f"{100 * growth / rss_warm:+.1f}%; every sixth of the measure: "
        f"{', '.join(f'{m:.0f}' for m in soak.samples)} MiB"
    )
    warm, last = (without_builder(m) for m in soak.marks)
    print(
        f"the same without the background document build (a process the server starts while "
        f"documents are out of date, and which ends with its work): after warm-up {warm:.0f} "
        f"MiB, end {last:.0f} MiB, growth {100 * (last - warm) / warm:+.1f}%"
    )
    (e0, s0), (e1, s1) = soak.sizes
    print(
        f"meanwhile the knowledge base grew from {e0} to {e1} errors ({100 * (e1 - e0) / e0:+.1f}%)"
        f" and from {s0} to {s1} releases: every entry's history is longer by "
        f"{s1 - s0} releases"
    )


def report_fresh(soak: Phase, fresh: Phase) -> None:
    """Growth beyond the data: the soaked server against a new one on the same knowledge base."""
    held, new = without_builder(soak.marks[-1]), without_builder(fresh.marks[-1])
    errors, snapshots = fresh.sizes[-1]
    print(
        f"fresh server after its warm-up, without the document build: {new:.0f} MiB "
        f"({_roles_text(fresh.marks[-1])}; {errors} errors, {snapshots} releases)"
    )
    print(
        f"memory the soaked server holds beyond what a fresh server holds for the same knowledge "
        f"base (goal <= 10%): {held:.0f} against {new:.0f} MiB, {100 * (held - new) / new:+.1f}%"
    )


if __name__ == "__main__":
    main()
