"""Benchmark: the MCP tools over streamable HTTP, beside the JSON API doing the same work.

Starts one `errkb serve` process on loopback and asks it the same questions both ways, from one
client process, one request at a time:
- get: `get_error(id)` over `/mcp` against `GET /api/errors/{id}`;
- match: `match_error(text)` against `POST /api/match` with the same text (an error message of
  the knowledge base inside a short traceback).
Every id and text is asked once both ways before timing, so both read warm caches. Each round
times every question both ways, interleaved (MCP, then HTTP, per question), so machine load
affects both sides alike. Prints per round the median latency of each, and over the rounds the
median and range of the medians and of the ratio MCP / HTTP (goal: within 1.5x). Beside them,
`tools/list` against `GET /healthz` (neither reads the database) shows how much of the
difference is the protocol's own cost, both SDK ends included, and "raw get" sends get_error as
one plain JSON-RPC POST (what any HTTP client of the 2026-07-28 protocol sends), so the server's
share of the cost shows apart from the SDK client's.

Usage: .venv/bin/python bench/mcp.py [--db URL] [--ids N] [--rounds N]
Without --db it uses a copy of the tests' cached 4-release sglang knowledge base (built by the
real pipeline on first use, see tests/kbcache.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# Run as a script, bench/ comes first on sys.path and bench/ingest.py would shadow the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from mcp.client import Client  # noqa: E402
from sqlalchemy import select  # noqa: E402

from errkb.core.db import make_engine  # noqa: E402
from errkb.core.models import Error  # noqa: E402


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_errkb(db_url: str, port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    """`errkb serve` on `port`, ready once /healthz answers."""
    env = {**os.environ, "ERRKB_DATABASE_URL": db_url, "ERRKB_DATA_DIR": str(data_dir)}
    env["ERRKB_ACCESS_LOG"] = "false"
    proc = subprocess.Popen(
        [str(BIN / "errkb"), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"errkb serve exited with {proc.returncode}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
            return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("errkb serve did not start")


# What a client of the 2026-07-28 protocol sends with each request (no initialize, no session).
RAW_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
RAW_HEADERS = {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "get_error",
    "Accept": "application/json, text/event-stream",
}


def questions(db_url: str, n: int, seed: int) -> tuple[list[str], list[str]]:
    """`n` random error ids and, for the matches, a traceback ending in each one's message."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(select(Error.id, Error.exception, Error.message)).all()
    finally:
        engine.dispose()
    picked = random.Random(seed).sample(rows, n)
    head = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
    return [r.id for r in picked], [f"{head}{r.exception}: {r.message}\n" for r in picked]


Ask = Callable[[str], Awaitable[object]]


async def timed(ask: Ask, item: str) -> float:
    """Seconds one question took."""
    started = time.perf_counter()
    await ask(item)
    return time.perf_counter() - started


async def run(base: str, ids: list[str], texts: list[str], rounds: int) -> dict[str, list[float]]:
    """Per kind and side, the median latency (ms) of each round."""
    medians: dict[str, list[float]] = {}
    async with httpx.AsyncClient(base_url=base, timeout=60) as http, Client(f"{base}/mcp") as mcp:

        async def mcp_get(error_id: str) -> object:
            result = await mcp.call_tool("get_error", {"id": error_id})
            assert not result.is_error, result.content
            return result

        async def http_get(error_id: str) -> object:
            return (await http.get(f"/api/errors/{error_id}")).raise_for_status()

        async def mcp_match(text: str) -> object:
            result = await mcp.call_tool("match_error", {"text": text})
            assert not result.is_error, result.content
            return result

        async def http_match(text: str) -> object:
            return (await http.post("/api/match", content=text.encode())).raise_for_status()

        raw_id = [0]

        async def raw_get(error_id: str) -> object:
            # The same tools/call as one JSON-RPC POST (the 2026-07-28 protocol needs no session):
            # the server's own cost, without the SDK client's.
            raw_id[0] += 1
            body = {
                "jsonrpc": "2.0",
                "id": raw_id[0],
                "method": "tools/call",
                "params": {"name": "get_error", "arguments": {"id": error_id}, "_meta": RAW_META},
            }
            answer = await http.post("/mcp", json=body, headers=RAW_HEADERS)
            answer.raise_for_status()
            assert "error" not in answer.json() and not answer.json()["result"].get("isError")
            return answer

        async def mcp_list(_: str) -> object:
            return await mcp.list_tools()

        async def http_health(_: str) -> object:
            return (await http.get("/healthz")).raise_for_status()

        kinds = {
            "get": (ids, mcp_get, http_get),
            "raw get": (ids, raw_get, http_get),
            "match": (texts, mcp_match, http_match),
            "list": (ids, mcp_list, http_health),
        }
        for items, *asks in kinds.values():  # warm both sides' caches, untimed
            for item in items:
                for ask in asks:
                    await ask(item)
        for r in range(rounds):
            for kind, (items, ask_mcp, ask_http) in kinds.items():
                mcp_s, http_s = [], []
                for item in items:
                    mcp_s.append(await timed(ask_mcp, item))
                    http_s.append(await timed(ask_http, item))
                m, h = statistics.median(mcp_s) * 1e3, statistics.median(http_s) * 1e3
                medians.setdefault(f"{kind} mcp", []).append(m)
                medians.setdefault(f"{kind} http", []).append(h)
                medians.setdefault(f"{kind} ratio", []).append(m / h)
                print(f"round {r + 1} {kind:7}: MCP {m:6.2f} ms, HTTP {h:6.2f} ms, {m / h:.2f}x")
    return medians


def spread(values: list[float], unit: str) -> str:
    """Median and range of a list of figures."""
    return (
        f"{statistics.median(values):.2f}{unit} ({min(values):.2f}-{max(values):.2f}{unit}, "
        f"{len(values)} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="SQLAlchemy URL of an ingested knowledge base")
    parser.add_argument("--ids", type=int, default=100, help="questions of each kind per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        db_url = args.db
        if db_url is None:
            from kbcache import copy_kb

            db_url = copy_kb(tmp / "kb.sqlite3")
        ids, texts = questions(db_url, args.ids, args.seed)
        port = free_port()
        proc = start_errkb(db_url, port, tmp)
        try:
            medians = asyncio.run(run(f"http://127.0.0.1:{port}", ids, texts, args.rounds))
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"\n{args.ids} questions of each kind per round, one at a time, warm caches:")
    notes = {
        "get": " (goal <= 1.5x)",
        "raw get": " (one JSON-RPC POST, no SDK client: the server's own cost)",
        "match": " (goal <= 1.5x)",
        "list": " (tools/list against GET /healthz)",
    }
    for kind, goal in notes.items():
        print(f"{kind:7} MCP   {spread(medians[f'{kind} mcp'], ' ms')}")
        print(f"{kind:7} HTTP  {spread(medians[f'{kind} http'], ' ms')}")
        print(f"{kind:7} ratio {spread(medians[f'{kind} ratio'], 'x')}{goal}")


if __name__ == "__main__":
    main()
