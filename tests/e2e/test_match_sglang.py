"""The matcher on real sglang releases: posted texts, generated logs, tracebacks, hostile bodies.

Most match-dev cases need only the shared knowledge base (0.5.18, 0.5.19, 0.5.20, 0.5.23). Two
need a release in which their raise still exists: `spec-mamba-no-buffer-radix-title` (only
0.5.10 has it) and `nan-in-logits-log-line` (gone after 0.5.10), so this module reads the
extended base (`sglang_kb_extended_url`: the shared one with 0.5.10 and 0.5.17 added, cached the
same way).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from match_corpus import cut, embed, render
from sqlalchemy import select

from errkb.core.db import make_engine
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.core.settings import Settings
from errkb.service.app import create_app
from errkb.service.match.matcher import MatchIndex, match_text
from errkb.service.match.matcher.index import CompiledTemplate
from errkb.service.match.queries import load_index

pytestmark = pytest.mark.sglang

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "data" / "match-dev" / "cases.jsonl"  # copied from ../shared/match-dev
REFERENCE = "does not support hybrid-SWA models yet (no whole-envelope transfer scheme"
KV_PATH = "sglang/srt/mem_cache/kv_cache_configurator.py"


@pytest.fixture(scope="module")
def kb_url(sglang_kb_extended_url: str) -> str:
    """The shared knowledge base with 0.5.10 too (and 0.5.17, which the timeline tests need)."""
    return sglang_kb_extended_url


@pytest.fixture(scope="module")
def index(kb_url: str) -> MatchIndex:
    engine = make_engine(kb_url)
    try:
        return load_index(engine)
    finally:
        engine.dispose()


def _messages(url: str) -> dict[str, str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return dict(conn.execute(select(Error.id, Error.message)).all())
    finally:
        engine.dispose()


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_real_posted_texts(case: dict[str, Any], index: MatchIndex, kb_url: str) -> None:
    found = match_text(index, case["posted_text"])
    if case["expect"] == "match":
        assert found, "no match at all"
        message = _messages(kb_url)[found[0].entry.id]
        assert case["expected_fragment"] in message, (found[0].score, message[:200])
    else:
        assert all(m.score < 0.8 for m in found), [(m.score, m.entry.title) for m in found]


def _signature(entry: CompiledTemplate) -> tuple[Any, ...]:
    """What a text can show of a template: its literal pieces and where placeholders sit."""
    return entry.pieces, tuple(bool(g) for g in entry.gaps)


def test_generated_logs_rank_the_raised_error_first(index: MatchIndex, kb_url: str) -> None:
    engine = make_engine(kb_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(
                    Error.id, Error.template, Occurrence.path, Occurrence.line, Occurrence.qualname
                )  # fmt: skip
                .add_columns(Error.exception)
                .join(Occurrence, Occurrence.error_id == Error.id)
                .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
                .where(Snapshot.label == "0.5.23")
                # raised errors only: a failed import is never `raise ImportError(` under its
                # frame, as these logs show it (tests/e2e/test_imports_sglang.py matches those)
                .where(Error.kind != "import")
                .order_by(Error.id, Occurrence.path, Occurrence.line)
            ).all()
    finally:
        engine.dispose()
    by_id = {e.id: e for e in index.entries}
    sites: dict[str, Any] = {}
    for row in rows:
        sites.setdefault(row.id, row)
    rng = random.Random(20260)
    tally: Counter[str] = Counter()
    for error_id, row in sites.items():
        entry = by_id.get(error_id)
        if entry is None or not entry.pieces:  # no literal text: no message can show it (its
            tally["opaque"] += 1  # frame can: tests/e2e/test_coverage_sglang.py)
            continue
        message = render(rng, row.template)
        module_path = row.path.removeprefix("python/")
        function = row.qualname.rsplit(".", 1)[-1]
        log = embed(
            rng,
            message,
            module_path=module_path,
            line=row.line,
            function=function,
            exception=row.exception,
        )
        found = match_text(index, log, limit=5)
        # The project's own test code ranks below the code a server runs, and a weak guess of
        # it is not offered, unless the text runs in a test; most of these logs are a server's
        # lines with no frame. The floors are for the code a server runs; test code is printed.
        kind = "test_" if entry.test_code else ""
        tally[kind + "total"] += 1
        if found and found[0].entry.id == error_id:
            tally[kind + "top1"] += 1
        elif found and _signature(found[0].entry) == _signature(entry):
            tally[kind + "top1"] += 1
            tally["top1_twin"] += 1  # a different error with the very same literal text
        found = match_text(index, cut(rng, message), limit=5)
        if any(m.entry.id == error_id or _signature(m.entry) == _signature(entry) for m in found):
            tally[kind + "cut_top5"] += 1
    top1 = tally["top1"] / tally["total"]
    cut_top5 = tally["cut_top5"] / tally["total"]
    tests = max(tally["test_total"], 1)
    print(
        f"\ngenerated 0.5.23: {tally['total']} errors of server code ({tally['opaque']} opaque "
        f"skipped), top-1 {top1:.2%} ({tally['top1_twin']} by an identical-text twin), cut to "
        f"60 chars top-5 {cut_top5:.2%}; {tally['test_total']} of test code: top-1 "
        f"{tally['test_top1'] / tests:.2%}, cut top-5 {tally['test_cut_top5'] / tests:.2%}"
    )
    assert tally["total"] > 5000
    assert top1 >= 0.99
    assert cut_top5 >= 0.95


def _traceback(line: int) -> str:
    return (
        "[2026-02-11 09:15:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", '
        "line 3120, in run_scheduler_process\n"
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
        f'  File "/usr/local/lib/python3.12/dist-packages/{KV_PATH}", line {line}, '
        "in _init_pools\n"
        "    raise ValueError(\n"
        "ValueError: --enable-unified-memory with PD disaggregation does not support hybrid-SWA "
        "models yet (no whole-envelope transfer scheme for the SWA sub-pool). Drop "
        "--enable-unified-memory or run without PD.\n"
    )


def test_reference_traceback_and_hostile_bodies_over_http(kb_url: str, tmp_path: Path) -> None:
    rng = random.Random(7)
    common_word = _most_common_first_word(kb_url)
    repeated = (common_word + " ") * ((1 << 20) // (len(common_word) + 1))

    async def scenario() -> list[httpx.Response]:
        app = create_app(Settings(database_url=kb_url, data_dir=tmp_path))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                bodies: list[bytes] = [
                    _traceback(406).encode(),
                    _traceback(451).encode(),
                    b"a" * (1 << 20),
                    repeated.encode(),
                    rng.randbytes(256 << 10),
                    b"a" * (5 << 20),
                ]
                return [await client.post("/api/match", content=b, timeout=120) for b in bodies]

    v18, v19, many_a, many_word, random_bytes, too_big = asyncio.run(scenario())
    for response, version, line in ((v18, "0.5.18", 406), (v19, "0.5.19", 451)):
        assert response.status_code == 200
        top = response.json()["matches"][0]
        assert REFERENCE in _messages(kb_url)[top["id"]]
        assert top["site"] == {
            "path": f"python/{KV_PATH}",
            "line": line,
            "function": "KVCacheConfigurator._init_pools",
        }
        assert top["snapshots"] == [version] and top["score"] >= 0.9
    for response in (many_a, many_word, random_bytes):
        assert response.status_code == 200
        assert all(m["score"] < 0.8 for m in response.json()["matches"])
    assert too_big.status_code == 413


def _most_common_first_word(url: str) -> str:
    """The word most templates start with: the worst case for candidate search."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            templates = [t for (t,) in conn.execute(select(Error.template)).all()]
    finally:
        engine.dispose()
    words = Counter(
        t[0]["text"].split()[0]
        for t in templates
        if t and t[0]["kind"] == "text" and t[0]["text"].split()
    )
    return words.most_common(1)[0][0]
