"""Batch work (matching, parsing, building entry docs) runs nicer than the server, by the
configured amount."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from pages_repo import ingest_pages_repo

from errkb.core.settings import Settings
from errkb.ingest.workers import Workers
from errkb.service.app import create_app
from errkb.service.docstore import workers as doc_workers
from errkb.service.entries import docs


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def test_parse_workers_add_their_niceness() -> None:
    own = os.nice(0)
    with Workers(2, nice=3) as workers:
        assert workers.submit(os.nice, 0).result() == min(19, own + 3)
    with Workers(2) as workers:  # the pool's own default: unchanged
        assert workers.submit(os.nice, 0).result() == own


def test_match_processes_run_nicer_than_the_server(db_url: str, tmp_path: Path) -> None:
    own = os.nice(0)
    before = _descendants(os.getpid())

    async def main() -> tuple[list[int], int]:
        app = create_app(Settings(database_url=db_url, data_dir=tmp_path, match_nice=7))
        async with app.router.lifespan_context(app):  # starts (and warms) the match process
            started = _descendants(os.getpid()) - before
            return [_nice(pid) for pid in started], os.nice(0)

    nices, server = asyncio.run(main())
    assert server == own  # the server itself keeps its priority
    assert min(19, own + 7) in nices  # the match process
    assert (Settings().match_nice, Settings().workers_nice) == (5, 10)  # the product's defaults


def test_entry_doc_workers_run_nicer_than_the_ingest(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_pages_repo(db_url, tmp_path)
    monkeypatch.setattr(
        doc_workers, "CHUNK", 1
    )  # one entry per task: several tasks, so the pool runs
    own = os.nice(0)
    before = _descendants(os.getpid())
    seen: list[int] = []

    def progress(done: int, total: int) -> None:  # called while the pool's processes live
        seen.extend(_nice(pid) for pid in _descendants(os.getpid()) - before)

    done = docs.materialize_entries(
        Settings(database_url=db_url, workers_nice=6), processes=2, progress=progress
    )
    assert done.entries > 1
    assert os.nice(0) == own  # the ingest itself keeps its priority
    assert min(19, own + 6) in seen  # the processes building the docs
