"""`errkb serve --ingest` (what `make run` runs): the server answers at once, on an empty
knowledge base, and serves each pinned snapshot once the background ingest has stored it."""

from __future__ import annotations

import os
import signal
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


def _family(pid: int) -> set[int]:
    """Every live descendant of `pid`, whatever session or group it moved to."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def test_ctrl_c_during_the_document_build_stops_everything_quietly(
    db_url: str, tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT to the terminal's whole process group) while the server builds the entry
    documents behind it: the server stops its match process, the document build and its
    workers; no child prints a traceback or its own interruption."""
    repo = new_repo(tmp_path / "proj")
    files = {
        f"m{i}.py": "".join(
            f"def f{j}(n):\n    if n < {j}:\n        raise ValueError(f'check {i}.{j}: {{n}}')\n"
            for j in range(40)
        )
        for i in range(40)
    }
    commit(repo, "one", files, day=0)
    repo.close()
    pins = tmp_path / "pins.toml"
    pins.write_text(
        f'[[repos]]\nname = "tests/proj"\ngit_url = "{(tmp_path / "proj").as_uri()}"\n'
        'commits = ["main"]\n'
    )
    env = {
        **os.environ,
        "ERRKB_DATABASE_URL": db_url,
        "ERRKB_CACHE_DIR": str(tmp_path / "cache"),
        "ERRKB_PINS_FILE": str(pins),
        "ERRKB_WORKERS": "2",
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
            start_new_session=True,  # its own group, as a terminal's foreground job
        )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        deadline = time.monotonic() + START_LIMIT
        while "built in the background" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        family = _family(proc.pid)
        assert len(family) >= 2, family  # the match process and the document build at least
        pressed = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        proc.wait(timeout=60)
        seconds = time.monotonic() - pressed
    finally:
        stop(proc)
    text = log.read_text()
    print(f"stopped {seconds:.1f} s after Ctrl-C, {len(family)} processes:\n{text[-1500:]}")
    assert proc.returncode in (0, 130), text
    for noise in ("Traceback", "KeyboardInterrupt", "terminated by SIGTERM", "error:"):
        assert noise not in text, text
    deadline = time.monotonic() + 30  # multiprocessing's helpers end once their pipes close
    while (left := [pid for pid in family if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], f"processes of the server outlived it: {[_command(p) for p in left]}"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return str(pid)
