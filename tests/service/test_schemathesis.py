"""Schemathesis against a real `errkb serve` on SQLite and PostgreSQL: every check, 0 failures.

The server runs the app as users run it (uvicorn, the deadline protocol, a real database holding
a small ingested project), and Schemathesis drives it from the OpenAPI document alone: schema
examples, boundary values, random and negative data, and linked calls. All its checks are on:
not only "no 5xx" but response schema, status code, content type and header conformance, and
that valid data is accepted and invalid data refused. The number of cases is bounded (and the
seed fixed) so the run stays short and repeatable.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pages_repo import ingest_pages_repo
from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.models import Error

# Schemathesis against a live server process; `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

ST = Path(sys.executable).parent / "st"
MAX_EXAMPLES = "25"  # per operation and phase: ~500 cases, about 30 s per database
# Fixed, so a run repeats; another seed explores other cases (printed, to repeat a failure).
SEED = os.environ.get("ERRKB_SCHEMATHESIS_SEED", "16")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(db_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A running server on an ingested database: (base URL, an error id it knows)."""
    ingest_pages_repo(db_url, tmp_path)
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        error_id = s.scalars(select(Error.id).order_by(Error.id)).first()
    engine.dispose()
    assert error_id
    port = _free_port()
    env = {**os.environ, "ERRKB_DATABASE_URL": db_url, "ERRKB_MATCH_REFRESH_SECONDS": "0.5"}
    cli = [sys.executable, "-c", "from errkb.service.cli.main import main; main()"]
    proc = subprocess.Popen(
        [*cli, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, "the server exited"
            time.sleep(0.1)
        yield url, error_id
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_schemathesis_finds_no_failure(
    server: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, error_id = server
    config = tmp_path / "schemathesis.toml"
    # NUL characters in generated strings (the default, said here since it is the point: a NUL
    # in any query string or path must get a declared answer). A known id, so GET
    # /api/errors/{error_id} is tested past its 404.
    config.write_text(
        "[generation]\nallow-x00 = true\n\n"
        '[[operations]]\ninclude-path = "/api/errors/{error_id}"\n'
        f'parameters = {{ error_id = "{error_id}" }}\n'
    )
    with capsys.disabled():
        print(f"\nschemathesis: seed {SEED}, {MAX_EXAMPLES} examples per operation and phase")
    result = subprocess.run(
        [str(ST), "--config-file", str(config), "run", f"{url}/openapi.json"]
        + ["--checks", "all", "--max-examples", MAX_EXAMPLES, "--seed", SEED]
        + ["--no-color", "--request-timeout", "30"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, f"seed {SEED}\n" + result.stdout[-6000:] + result.stderr[-2000:]
    # Every operation of the document was exercised (the new ones included).
    counts = re.search(r"Operations:\s+(\d+) selected / (\d+) total", result.stdout)
    assert counts is not None and counts[1] == counts[2] and int(counts[1]) >= 6, result.stdout
    assert "No issues found" in result.stdout, result.stdout[-3000:]
