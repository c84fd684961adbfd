"""`errkb serve --ingest` (what `make run` runs): the server answers at once, on an empty
knowledge base, and serves each pinned snapshot once the background ingest has stored it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from gitrepo import commit, new_repo
from serving import ERRKB, START_LIMIT, free_port, stop, wait_healthy

pytestmark = pytest.mark.slow

RAISING = "def f(n):\n    if n < 0:\n        raise ValueError(f'n must be >= 0, got {n}')\n"


def _entries(base: str) -> list[str]:
    body = httpx.get(f"{base}/api/errors", params={"limit": 10}, timeout=10).json()
    return [item["id"] for item in body["items"]]


def test_serve_ingest_serves_first_and_each_snapshot_as_it_is_stored(
    db_url: str, tmp_path: Path
) -> None:
    repo = new_repo(tmp_path / "proj")
    first = commit(repo, "one", {"a.py": RAISING}, day=0)
    commit(repo, "two", {"b.py": RAISING.replace("n must", "m must")}, day=1)
    repo.close()
    pins = tmp_path / "pins.toml"
    pins.write_text(
        f'[[repos]]\nname = "tests/proj"\ngit_url = "{(tmp_path / "proj").as_uri()}"\n'
        f'commits = ["{first}", "main"]\n'
    )
    env = {
        **os.environ,
        "ERRKB_DATABASE_URL": db_url,
        "ERRKB_DATA_DIR": str(tmp_path / "data"),
        "ERRKB_CACHE_DIR": str(tmp_path / "cache"),
        "ERRKB_PINS_FILE": str(pins),
        "ERRKB_WORKERS": "1",
    }
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [ERRKB, "serve", "--ingest", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        deadline = time.monotonic() + START_LIMIT
        while len(ids := _entries(base)) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert len(ids) == 2, log.read_text()
        for error_id in ids:
            entry = httpx.get(f"{base}/api/errors/{error_id}", timeout=30)
            assert entry.status_code == 200
            assert entry.json()["exception"] == "ValueError"
        snapshots = httpx.get(f"{base}/api/snapshots", timeout=10).json()
        assert len(snapshots) == 2, snapshots
    finally:
        stop(proc)
    text = log.read_text()
    assert "Ingesting the pinned releases in the background" in text
    ingest_lines = [line for line in text.splitlines() if line.startswith("ingest: ")]
    assert any("2 snapshots: 2 ingested" in line for line in ingest_lines), text
