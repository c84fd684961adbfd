"""On a machine where no PostgreSQL answers, a test run starts its own and removes it after; with
no binaries either, it stops in one line. Run as a nested pytest pointed at a port where nothing
listens (the machine's own server is left alone).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import throwaway_pg

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
NESTED = """
from sqlalchemy import text
from errkb.core.db import make_engine

pytestmark = pytest.mark.slow  # real server processes (see `make test-fast`)


def test_on_postgres(db_url):
    engine = make_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(text("SHOW server_version")).scalar()
        assert conn.execute(text("SELECT count(*) FROM snapshots")).scalar() == 0
    engine.dispose()
"""


def _silent_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there now
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nested_run(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_nested.py").write_text(NESTED)
    url = f"postgresql://postgres@127.0.0.1:{_silent_port()}/test"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider"]
        + ["-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path)]
        + [f"{tmp_path / 'test_nested.py'}::test_on_postgres[postgres]"],
        env={**os.environ, "PYTHONPATH": str(TESTS), "ERRKB_TEST_POSTGRES_URL": url, **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )


@pytest.mark.skipif(throwaway_pg.binaries() is None, reason="no PostgreSQL binaries installed")
def test_a_run_starts_and_removes_its_own_server(tmp_path: Path) -> None:
    done = _nested_run(tmp_path, {})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    said = [line for line in done.stderr.splitlines() if "throwaway" in line]
    assert len(said) == 1 and said[0].startswith("No PostgreSQL answers at postgresql://"), said
    port = re.search(r"at 127\.0\.0\.1:(\d+) for this run", said[0])
    assert port is not None, said
    with socket.socket() as s:  # the server is gone
        assert s.connect_ex(("127.0.0.1", int(port[1]))) != 0
    left = [
        opts
        for opts in Path(tempfile.gettempdir()).glob("errkb-test-pg-*/data/postmaster.opts")
        if f"-p {port[1]} " in opts.read_text()
    ]
    assert not left, "its folder was left behind"


def test_with_no_binaries_the_run_stops_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    done = _nested_run(tmp_path, {"ERRKB_TEST_POSTGRES_BIN": str(empty)})
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    said = [line for line in (done.stdout + done.stderr).splitlines() if "PostgreSQL" in line]
    assert len(said) == 1, said
    assert "apt-get install postgresql" in said[0] and "ERRKB_TEST_POSTGRES_URL" in said[0]
