"""Reading the next snapshot while this one is traced and stored (`ingest.read_ahead`).

A real small project (this repository's own ingest, knowledge and core, as a git history of
three commits, each editing files the next traces again) is ingested one snapshot after the
other, and read ahead: the databases hold the same knowledge, origins included, while each next
snapshot was being read before the one before it was committed. A history whose ingest is killed
while a snapshot is stored and the next one read leaves the state before, its processes end with
it, and a second run gives what an uninterrupted one gives.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import drop_pg, fresh_pg_url
from dbdump import dump
from gitrepo import commit, new_repo
from sqlalchemy import select
from test_kill import CLI, PAUSING_CLI, _dump, _env

from errkb.core.db import make_engine, upgrade
from errkb.core.models import SiteBody, unpacked_code
from errkb.ingest.origins import kept
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.read_ahead import ingest_in_turn
from errkb.ingest.sources.git import GitSource

ROOT = Path(__file__).resolve().parents[2]
PIN = RepoPin(name="tests/ahead", exceptions=("*",), asserts=True)
EDITS = ("ingest/origins/trace.py", "ingest/pipeline.py", "knowledge/who/__init__.py")
WAIT = 120  # seconds the first commit waits for the next snapshot's read to start


@pytest.fixture(params=["sqlite", "postgres"])
def two_dbs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """Two migrated, empty databases of one backend."""
    if request.param == "sqlite":
        source = request.getfixturevalue("migrated_sqlite")
        paths = [tmp_path / f"db{i}.sqlite3" for i in range(2)]
        for path in paths:
            shutil.copyfile(source, path)
        yield [f"sqlite:///{p}" for p in paths]
        return
    urls = [fresh_pg_url() for _ in range(2)]
    for url in urls:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
    yield urls
    for url in urls:
        drop_pg(url)


def _history(root: Path) -> list[str]:
    """The project's ingest, knowledge and core as three commits, each after the first editing
    files (a new function with a check in each)."""
    files = {
        p.relative_to(ROOT).as_posix(): p.read_text()
        for folder in ("ingest", "knowledge", "errkb/core")
        for p in sorted((ROOT / folder).rglob("*.py"))
    }
    repo = new_repo(root)
    shas = [commit(repo, "start", files, day=0)]
    for day in (1, 2):
        edited = {
            path: files[path] + f"\n\ndef _added_{day}(x):\n    assert x > {day}\n    return x\n"
            for path in EDITS[day - 1 : day + 1]
            if path in files
        }
        files.update(edited)
        shas.append(commit(repo, f"edit {day}", edited, day=day))
    repo.close()
    return shas


class _Phases:
    """Progress that notes the phases, and knows when a second snapshot's read has begun."""

    def __init__(self) -> None:
        self.reads = 0
        self.second_read = threading.Event()

    def phase(self, description: str, total: int | None) -> None:
        if description.endswith(": reading"):
            self.reads += 1
            if self.reads >= 2:
                self.second_read.set()

    def advance(self, steps: int = 1) -> None:
        pass


def _knowledge(engine_url: str) -> tuple[object, ...]:
    engine = make_engine(engine_url)
    try:
        with engine.connect() as conn:
            codes = conn.execute(select(SiteBody.code)).scalars().all()
        origins = sorted(json.dumps(unpacked_code(c)["snippet"].get("origin")) for c in codes)
        return dump(engine), origins
    finally:
        engine.dispose()


def test_reading_ahead_stores_what_one_snapshot_after_another_stores(
    two_dbs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    shas = _history(proj)
    monkeypatch.chdir(proj)

    def source(sha: str) -> GitSource:
        return GitSource(str(proj), sha, cache_dir=tmp_path / "git-cache")

    kept.forget()  # each run as a new process would start it
    serial = make_engine(two_dbs[0])
    try:
        job = Job(engine=serial, workers=2, cache_dir=tmp_path / "cache-serial")
        for sha in shas:
            with source(sha) as s:
                summary = ingest_snapshot(s, PIN, PIN.extract_config(500_000), job)
            assert summary.status == "ingested" and summary.sites > 50
    finally:
        serial.dispose()

    kept.forget()
    phases = _Phases()
    commits: list[bool] = []

    def before_commit() -> None:  # the first snapshot stays uncommitted until the next is read
        if not commits:
            commits.append(phases.second_read.wait(WAIT))

    ahead = make_engine(two_dbs[1])
    summaries: list[object] = []
    failures: list[object] = []
    try:
        job = Job(ahead, workers=2, cache_dir=tmp_path / "cache-ahead", before_commit=before_commit)
        planned = [(PIN, PIN.extract_config(500_000), lambda sha=sha: source(sha)) for sha in shas]
        ingest_in_turn(planned, job, phases, summaries, failures.append)  # type: ignore[arg-type]
    finally:
        ahead.dispose()
    assert failures == [] and commits == [True]  # the second snapshot was read before
    assert [s.status for s in summaries] == ["ingested"] * 3  # type: ignore[attr-defined]
    expected, got = _knowledge(two_dbs[0]), _knowledge(two_dbs[1])
    assert got == expected
    kinds = {json.loads(o)["kind"] for o in expected[1] if o != "null"}
    assert "internal" in kinds  # the origins are among what is compared


def _family(pid: int) -> set[int]:
    """The process and every process it started, as /proc shows them now."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    family, grew = {pid}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return family


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _git_ingest(url: str, tmp_path: Path, proj: Path, shas: list[str]) -> None:
    refs = [arg for sha in shas for arg in ("--ref", sha)]
    args = [*CLI, "ingest", "--pins", str(tmp_path / "pins.toml"), "--repo", "tests/ahead"]
    proc = subprocess.run(
        [*args, "--git", str(proj), *refs],
        env={**_env(url, tmp_path), "ERRKB_WORKERS": "2"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_a_killed_ingest_reading_ahead_leaves_the_state_before(
    two_dbs: list[str], tmp_path: Path
) -> None:
    reference, killed = two_dbs
    (tmp_path / "pins.toml").write_text(
        '[[repos]]\nname = "tests/ahead"\nexceptions = ["*"]\nasserts = true\n'
    )
    proj = tmp_path / "proj"
    shas = _history(proj)
    _git_ingest(reference, tmp_path, proj, shas)
    expected = _dump(reference)

    _git_ingest(killed, tmp_path, proj, shas[:1])
    before = _dump(killed)
    refs = [arg for sha in shas[1:] for arg in ("--ref", sha)]
    args = [*PAUSING_CLI, "ingest", "--pins", str(tmp_path / "pins.toml"), "--repo", "tests/ahead"]
    proc = subprocess.Popen(
        [*args, "--git", str(proj), *refs],
        env={**_env(killed, tmp_path, pause=WAIT), "ERRKB_WORKERS": "2"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    family: set[int] = set()
    try:
        assert proc.stderr is not None
        reads, paused = 0, False
        for line in proc.stderr:  # the second snapshot paused before its commit, the third read
            reads += line.rstrip().endswith(": reading")
            paused = paused or ("pausing" in line and "before commit" in line)
            if paused and reads >= 2:
                break
        else:
            pytest.fail(f"the ingest ended before its commit (exit {proc.wait()})")
        time.sleep(1)  # the third snapshot's parse processes at work
        family = _family(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # the ingest process alone: its children must follow
        assert proc.wait(timeout=30) == -signal.SIGKILL
        deadline = time.monotonic() + 30
        while (left := [p for p in family if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], f"processes outlived the killed ingest: {left}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert len(family) >= 3  # the ingest, and parse processes (of the read ahead among them)
    interrupted = _dump(killed)
    assert {k: v for k, v in interrupted.items() if k != "file_cache"} == {
        k: v for k, v in before.items() if k != "file_cache"
    }

    _git_ingest(killed, tmp_path, proj, shas[1:])
    assert _dump(killed) == expected
