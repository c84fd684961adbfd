"""Every reproduction of issue 16 ("hostile input and many processes"), kept as a regression test.

Crafted requests on both backends (forged cursors, NUL bytes, a forged Host header, an empty
match body), a crashing route, hostile folders and pins files, a killed ingest and its workers,
slow clients of a real server, and CLI failures.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pages_repo import ingest_pages_repo
from sqlalchemy import select

from errkb.core.db import make_engine, session_factory
from errkb.core.errors import ConfigError
from errkb.core.models import Occurrence
from errkb.core.records import ExtractConfig
from errkb.core.settings import Settings
from errkb.ingest.extract import extract_file
from errkb.ingest.pins import load_pins
from errkb.service.app import create_app
from errkb.service.security import CSP

CLI = [sys.executable, "-c", "from errkb.service.cli.main import main; main()"]
# base64 of "0:9223372036854775808" (past int64) and "0:2147483648" (past PostgreSQL's INTEGER)
FORGED_CURSORS = ["MDo5MjIzMzcyMDM2ODU0Nzc1ODA4", "MDoyMTQ3NDgzNjQ4"]


@pytest.fixture
def kb(db_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A small ingested project: (database URL, the repo path of a file that raises)."""
    ingest_pages_repo(db_url, tmp_path)
    engine = make_engine(db_url)
    with session_factory(engine)() as s:
        path = s.scalars(select(Occurrence.path).order_by(Occurrence.path)).first()
    engine.dispose()
    assert path
    yield db_url, path


def _get(
    url: str, requests: list[tuple[str, str, dict[str, str]]], **settings: Any
) -> list[httpx.Response]:
    """Send (method, path, headers) requests to the app; app exceptions become responses."""

    async def run() -> list[httpx.Response]:
        app = create_app(Settings(database_url=url, **settings))
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return [
                    await client.request(method, path, headers=headers)
                    for method, path, headers in requests
                ]

    return asyncio.run(run())


def test_forged_cursors_are_refused_before_the_database(kb: tuple[str, str]) -> None:
    url, path = kb
    paths = []
    for cursor in FORGED_CURSORS:
        paths += [f"/api/errors?cursor={cursor}", f"/?cursor={cursor}"]
        paths += [f"/modules/{path}?cursor={cursor}", f"/flags/tp-size?cursor={cursor}"]
    responses = _get(url, [("GET", p, {}) for p in paths])
    for p, response in zip(paths, responses, strict=True):
        assert response.status_code in (404, 422), (p, response.status_code, response.text)
    for response in responses[:1] + responses[4:5]:  # the API's answers: the declared shape
        assert [e["loc"] for e in response.json()["detail"]] == [["query", "cursor"]]


NUL_PATHS = [
    "/api/errors/%00abc",
    "/api/errors?path=a%00b",
    "/api/errors?flag=--x%00",
    "/api/errors?snapshot=%00",
    "/api/errors?q=a%00",
    "/api/snapshots?repo=r%00",
    "/api/errors/0123456789abcdef?snapshot=v1%00",
    "/errors/%00",
    "/modules/srv%00/x.py",
    "/flags/%00",
    "/?path=%00",
    "/?snapshot=%00",
]


def test_nul_bytes_never_reach_the_database(kb: tuple[str, str]) -> None:
    url, _ = kb
    responses = _get(url, [("GET", p, {}) for p in NUL_PATHS])
    for p, response in zip(NUL_PATHS, responses, strict=True):
        assert response.status_code in (404, 422), (p, response.status_code, response.text)
        assert response.headers["x-content-type-options"] == "nosniff"
    by_path = dict(zip(NUL_PATHS, responses, strict=True))
    assert by_path["/api/errors/%00abc"].status_code == 404
    detail = by_path["/api/errors?path=a%00b"].json()["detail"]
    assert detail[0]["loc"] == ["query", "path"]
    assert by_path["/errors/%00"].headers["content-type"].startswith("text/html")


def test_a_crash_is_a_bare_500_with_security_headers(db_url: str) -> None:
    async def run() -> list[httpx.Response]:
        app = create_app(Settings(database_url=db_url))

        @app.get("/api/boom")
        def api_boom() -> None:
            raise RuntimeError("secret internals /etc/passwd")

        @app.get("/boom")
        def page_boom() -> None:
            raise RuntimeError("secret internals /etc/passwd")

        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                html = {"accept": "text/html"}
                return [await client.get("/api/boom"), await client.get("/boom", headers=html)]

    api, page = asyncio.run(run())
    for response in (api, page):
        assert response.status_code == 500
        assert "secret internals" not in response.text and "Traceback" not in response.text
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-frame-options"] == "DENY"
    assert api.json() == {"detail": "the server failed to answer this request; it has been logged"}
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Server error</h1>" in page.text


def test_host_header_never_reaches_canonical_urls(kb: tuple[str, str]) -> None:
    url, path = kb
    pages = ["/", f"/modules/{path}", "/sitemap.xml"]
    evil = [("GET", p, {"host": "evil.example"}) for p in pages]
    plain = [("GET", p, {}) for p in pages]
    responses = _get(url, evil + plain)
    for response in responses:
        assert "evil.example" not in response.text
    assert '<link rel="canonical" href="/">' in responses[0].text
    assert 'property="og:url"' not in responses[0].text  # og:url must be absolute: none
    assert responses[2].status_code == 404  # no sitemap without ERRKB_PUBLIC_URL
    # The same page for every Host, so one ETag is right for all of them.
    assert responses[0].text == responses[3].text
    assert responses[0].headers["etag"] == responses[3].headers["etag"]
    (sitemap,) = _get(
        url, [("GET", "/sitemap.xml", {"host": "evil.example"})], public_url="https://kb.example"
    )
    assert sitemap.status_code == 200 and "https://kb.example/errors/" in sitemap.text
    assert "evil.example" not in sitemap.text


def test_contract_of_match_and_datetimes(kb: tuple[str, str]) -> None:
    url, _ = kb
    no_body, snapshots = _get(url, [("POST", "/api/match", {}), ("GET", "/api/snapshots", {})])
    assert no_body.status_code == 422
    assert no_body.json()["detail"][0]["loc"] == ["body"]
    rows = snapshots.json()
    assert rows
    for row in rows:
        for field in ("ingested_at", "date"):
            if row[field] is not None:
                value = datetime.fromisoformat(row[field])
                assert value.utcoffset() is not None and value.utcoffset().total_seconds() == 0


def test_folder_walker_skips_loops_and_undecodable_names(tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "good.py").write_text("def f(x):\n    raise ValueError('bad x')\n")
    os.symlink("s.py", root / "s.py")  # a link to itself: resolving it loops
    with open(os.fsencode(root) + b"/caf\xe9.py", "wb") as f:
        f.write(b"raise ValueError('latin name')\n")
    env = {**os.environ, "ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}"}
    env["ERRKB_PINS_FILE"] = str(_pins(tmp_path, ""))
    result = subprocess.run(
        [*CLI, "ingest", "--dir", str(root), "--label", "v1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    engine = make_engine(env["ERRKB_DATABASE_URL"])
    with session_factory(engine)() as s:
        from errkb.core.models import Snapshot

        (snapshot,) = s.scalars(select(Snapshot))
        skipped = snapshot.skipped
    engine.dispose()
    assert skipped.get("unsafe") == 2, skipped


def test_latin1_file_with_coding_line_is_read_as_python_reads_it() -> None:
    source = "# -*- coding: latin-1 -*-\ndef f():\n    raise ValueError('café fermé')\n"
    result = extract_file(source.encode("latin-1"), "m.py", ExtractConfig())
    assert result.status == "ok"
    assert [s.template.display for s in result.sites] == ["café fermé"]
    without_line = "def f():\n    raise ValueError('café')\n".encode("latin-1")
    assert extract_file(without_line, "m.py", ExtractConfig()).status == "not_utf8"


def _pins(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "pins.toml"
    path.write_text(f'[[repos]]\nname = "tests/hostile"\n{extra}')
    return path


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('web_url = "javascript:alert(1)"\n', "repos.0.web_url"),
        ('web_url = "https://ok.example/a b"\n', "repos.0.web_url"),
        ('git_url = "ext::sh -c touch% /tmp/pwned"\n', "repos.0.git_url"),
        ('tag_pattern = "{version.__class__.__mro__}"\n', "repos.0.tag_pattern"),
        ('tag_pattern = "{version[0]}"\n', "repos.0.tag_pattern"),
        ('tag_pattern = "release"\n', "repos.0.tag_pattern"),
    ],
)
def test_pins_validators_refuse(tmp_path: Path, extra: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem.replace(".", r"\.")):
        load_pins(_pins(tmp_path, extra))


def test_pins_validators_accept_the_real_forms(tmp_path: Path) -> None:
    extra = (
        'git_url = "https://github.com/o/r.git"\nweb_url = "https://github.com/o/r"\n'
        'tag_pattern = "v{version}"\n'
    )
    assert load_pins(_pins(tmp_path, extra)).repos[0].tag_pattern == "v{version}"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_cli_failures_are_one_line_with_distinct_codes(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    db = {"ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}"}
    dead = {"ERRKB_DATABASE_URL": "postgresql://postgres:secret@127.0.0.1:9/nowhere"}

    binary_run = _cli("ingest", "--pins", str(binary), env=db)
    empty_run = _cli("ingest", "--pins", str(empty), env=db)
    dead_run = _cli("show", "0123456789abcdef", env=dead)
    assert "not a text (TOML) file" in _one_line(binary_run)
    assert "no [[repos]]" in _one_line(empty_run)
    line = _one_line(dead_run)
    assert "cannot use the database" in line and "secret" not in line
    codes = {binary_run.returncode, empty_run.returncode, dead_run.returncode}
    assert 0 not in codes
    assert binary_run.returncode == empty_run.returncode != dead_run.returncode


def test_cli_crash_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    crash = (
        "import errkb.service.cli.main as m\n"
        "def boom() -> None:\n"
        "    raise RuntimeError('kaboom')\n"
        "m.app.command('boom')(boom)\n"
        "m.main()\n"
    )
    plain = subprocess.run(
        [sys.executable, "-c", crash, "boom"], capture_output=True, text=True, timeout=60
    )
    debug = subprocess.run(
        [sys.executable, "-c", crash, "--debug", "boom"], capture_output=True, text=True, timeout=60
    )
    assert "unexpected RuntimeError: kaboom" in _one_line(plain)
    assert plain.returncode == debug.returncode == 70
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1].startswith("error: unexpected RuntimeError")


def _tree(root: Path, files: int = 300) -> Path:
    """Enough work for two workers to be busy for a while."""
    for i in range(files):
        body = "".join(
            f"def check_{j}(value):\n"
            f"    if value < {j}:\n"
            f"        raise ValueError(f'check {i}.{j} failed for {{value!r}}')\n"
            for j in range(150)
        )
        (root / f"mod{i}.py").write_text(body)
    return root


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            out.setdefault(ppid, []).append(int(entry))
    return out


def _descendants(pid: int) -> set[int]:
    children = _children()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_ingest_leaves_no_process(tmp_path: Path, sig: signal.Signals) -> None:
    root = tmp_path / "src"
    root.mkdir()
    _tree(root)
    env = {
        **os.environ,
        "ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}",
        "ERRKB_PINS_FILE": str(_pins(tmp_path, "")),
        "ERRKB_WORKERS": "2",
    }
    proc = subprocess.Popen(
        [*CLI, "ingest", "--dir", str(root), "--label", "v1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    family: set[int] = set()
    try:
        # Mid-parse: the forkserver and both workers exist (at least three descendants).
        for _ in range(600):
            family |= _descendants(proc.pid)
            if len([p for p in family if _running(p)]) >= 3 or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the ingest ended before it could be killed"
        assert len(family) >= 3, family
        time.sleep(0.5)
        family |= _descendants(proc.pid)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_running(p) for p in family):
            time.sleep(0.1)
        left = [p for p in family if _running(p)]
        assert left == [], f"processes of the killed ingest still running: {left}"
        if sig == signal.SIGTERM:
            stderr = proc.stderr.read().decode() if proc.stderr else ""
            assert proc.returncode == 143 and "terminated by SIGTERM" in stderr
    finally:
        # Whatever is left (a regression) must not outlive the test.
        for pid in [proc.pid, *family, *_descendants(proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_slow_clients_are_disconnected(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "ERRKB_DATABASE_URL": f"sqlite:///{tmp_path / 'kb.sqlite3'}",
        "ERRKB_REQUEST_TIMEOUT_SECONDS": "1",
    }
    server = subprocess.Popen(
        [*CLI, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        closed: set[int] = set()
        # One byte per socket every 0.2 s: each would take 7 s to send its request.
        for i in range(len(request)):
            for n, s in enumerate(sockets):
                if n in closed:
                    continue
                try:
                    s.sendall(request[i : i + 1])
                    s.settimeout(0.001)
                    if s.recv(1) == b"":
                        closed.add(n)
                except (BlockingIOError, TimeoutError):
                    pass
                except OSError:
                    closed.add(n)
            if len(closed) == len(sockets):
                break
            time.sleep(0.2)
        for s in sockets:
            s.close()
        assert len(closed) == len(sockets), f"{len(sockets) - len(closed)} slow clients held on"
        # A client sending at a normal pace is still served.
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
