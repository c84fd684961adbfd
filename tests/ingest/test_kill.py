"""SIGKILL `errkb ingest` while a snapshot's transaction is open, run it again, and get exactly
what an uninterrupted run gives (a real subprocess, on SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import drop_pg, fresh_pg_url
from dbdump import dump

from errkb.core.db import make_engine

# Five real ingest processes, one of them killed (minutes under load): not in `make test-fast`.
pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from errkb.service.cli.main import app; app()"]
# The CLI with a pause inside the snapshot's open transaction: `write_snapshot` is wrapped so the
# kill test can SIGKILL an ingest at exactly that point (no hook in the production settings).
PAUSING_CLI = [
    sys.executable,
    "-c",
    """
import os, sys, time
from errkb.ingest import store

def pause():
    seconds = float(os.environ["PAUSE_BEFORE_COMMIT"])
    print(f"test hook: pausing {seconds}s before commit", file=sys.stderr, flush=True)
    time.sleep(seconds)

write_snapshot = store.write_snapshot
store.write_snapshot = lambda *a, **kw: write_snapshot(*a, **{**kw, "before_commit": pause})
from errkb.service.cli.main import app
app()
""",
]
PINS = '[[repos]]\nname = "tests/kill"\nexceptions = ["ValueError"]\n'


@pytest.fixture(params=["sqlite", "postgres"])
def two_urls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two empty databases on one backend: the reference run and the killed run."""
    if request.param == "sqlite":
        yield (
            f"sqlite:///{tmp_path / 'reference.sqlite3'}",
            f"sqlite:///{tmp_path / 'killed.sqlite3'}",
        )
        return
    urls = (fresh_pg_url(), fresh_pg_url())
    try:
        yield urls
    finally:
        for url in urls:
            drop_pg(url)


def _tree(root: Path, tag: str, files: int = 60) -> Path:
    """A generated package: shared modules plus modules whose messages carry the tag."""
    for i in range(files):
        pkg = root / f"pkg{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        own = tag if i % 3 else "shared"
        body = "".join(
            f"def check_{j}(value, mode):\n"
            f"    if mode == 'm{j}' and value < {j}:\n"
            f"        raise ValueError(f'{own} check {i}.{j} failed for {{value!r}}')\n"
            for j in range(12)
        )
        (pkg / f"mod{i}.py").write_text(body)
    return root


def _env(url: str, tmp_path: Path, pause: float = 0) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ERRKB_DATABASE_URL=url,
        ERRKB_CACHE_DIR=str(tmp_path / "cache"),
        ERRKB_DATA_DIR=str(tmp_path / "data"),
        PAUSE_BEFORE_COMMIT=str(pause),
    )
    return env


def _ingest(url: str, tmp_path: Path, folder: Path, label: str) -> None:
    args = [*CLI, "ingest", "--pins", str(tmp_path / "pins.toml"), "--repo", "tests/kill", "--docs"]
    proc = subprocess.run(
        [*args, "--dir", str(folder), "--label", label],
        env=_env(url, tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def _kill_mid_snapshot(url: str, tmp_path: Path, folder: Path, label: str) -> None:
    """Start an ingest, wait until its snapshot transaction is open, SIGKILL it."""
    args = [*PAUSING_CLI, "ingest", "--pins", str(tmp_path / "pins.toml"), "--repo", "tests/kill"]
    proc = subprocess.Popen(
        [*args, "--dir", str(folder), "--label", label],
        env=_env(url, tmp_path, pause=120),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill reaches every child
    )
    try:
        deadline = time.monotonic() + 240
        assert proc.stderr is not None
        for line in proc.stderr:
            if "pausing" in line and "before commit" in line:
                break
            assert time.monotonic() < deadline, "the ingest never reached its commit"
        else:
            pytest.fail(f"ingest ended before its commit (exit {proc.wait()})")
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _dump(url: str) -> dict[str, list[str]]:
    engine = make_engine(url)
    try:
        return dump(engine)
    finally:
        engine.dispose()


def test_killed_ingest_reruns_to_the_uninterrupted_state(
    two_urls: tuple[str, str], tmp_path: Path
) -> None:
    reference, killed = two_urls
    (tmp_path / "pins.toml").write_text(PINS)
    first = _tree(tmp_path / "first", "first")
    second = _tree(tmp_path / "second", "second")

    _ingest(reference, tmp_path, first, "first")
    _ingest(reference, tmp_path, second, "second")
    expected = _dump(reference)
    assert len(expected["snapshots"]) == 2 and len(expected["occurrences"]) == 2 * 60 * 12

    _ingest(killed, tmp_path, first, "first")
    after_first = _dump(killed)
    _kill_mid_snapshot(killed, tmp_path, second, "second")
    interrupted = _dump(killed)
    # Nothing of the killed snapshot is visible; only idempotent cache rows were kept.
    assert {k: v for k, v in interrupted.items() if k != "file_cache"} == {
        k: v for k, v in after_first.items() if k != "file_cache"
    }
    assert len(interrupted["file_cache"]) > len(after_first["file_cache"])

    _ingest(killed, tmp_path, second, "second")
    final = _dump(killed)
    # Entry docs are packed with a dictionary trained on the first full build, which differs
    # between the two runs: the same docs, other bytes. Compare how many there are.
    derived = ("entry_docs", "pack_dictionaries")
    assert len(final["entry_docs"]) == len(expected["entry_docs"])
    assert {k: v for k, v in final.items() if k not in derived} == {
        k: v for k, v in expected.items() if k not in derived
    }
