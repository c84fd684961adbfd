"""A real `errkb serve` for the tests that are about the server: started on a free port with its
log in a file (never a pipe a chatty server could fill and stall), stopped with its group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

ERRKB = str(Path(sys.executable).parent / "errkb")
START_LIMIT = 180.0  # a generous wait on a loaded machine; never an assertion about speed


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(url: str, port: int, data_dir: Path, *args: str) -> subprocess.Popen[str]:
    """`errkb serve --port PORT ARGS` on the database at `url`."""
    env = {**os.environ, "ERRKB_DATABASE_URL": url, "ERRKB_DATA_DIR": str(data_dir)}
    with tempfile.TemporaryFile("w+") as err:
        return subprocess.Popen(
            [ERRKB, "serve", "--port", str(port), *args],
            env=env,
            cwd=data_dir,
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            start_new_session=True,  # --workers starts processes: stop the whole group
        )


def wait_healthy(base: str, proc: subprocess.Popen[str]) -> None:
    """Wait until the server at `base` answers /healthz, failing the test if it dies first."""
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server at {base} exited {proc.returncode}")
        try:
            httpx.get(f"{base}/healthz", timeout=5)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    pytest.fail(f"server at {base} did not start")


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the server's group, SIGKILL it if it lingers."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
