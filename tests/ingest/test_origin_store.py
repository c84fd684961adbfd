"""The origin index's store across processes, through the pipeline (SQLite and PostgreSQL).

A real small project (this repository's own ingest, knowledge and core, as a git history of
two commits) is ingested three times into empty databases: with nothing kept, filling a store
in the cache folder, and from that store in a process that keeps nothing in memory. The three
databases hold the same knowledge, origins included, and the last run reads no file again to
trace it. Nothing is written outside the cache folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import drop_pg, fresh_pg_url
from dbdump import dump
from gitrepo import commit, new_repo
from sqlalchemy import select

import errkb.ingest.site_origins as site_origins
from errkb.core.db import make_engine, upgrade
from errkb.core.models import SiteBody, unpacked_code
from errkb.ingest.origin_store import FILE_NAME
from errkb.ingest.origins import kept
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.git import GitSource

ROOT = Path(__file__).resolve().parents[2]
PIN = RepoPin(name="tests/origins", exceptions=("*",), asserts=True)
EDITED = "ingest/origins/trace.py"


@pytest.fixture(params=["sqlite", "postgres"])
def three_dbs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """Three migrated, empty databases of one backend."""
    if request.param == "sqlite":
        source = request.getfixturevalue("migrated_sqlite")
        paths = [tmp_path / f"db{i}.sqlite3" for i in range(3)]
        for path in paths:
            shutil.copyfile(source, path)
        yield [f"sqlite:///{p}" for p in paths]
        return
    urls = [fresh_pg_url() for _ in range(3)]
    for url in urls:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
    yield urls
    for url in urls:
        drop_pg(url)


def _history(root: Path) -> list[str]:
    """The project's ingest, knowledge and core as two commits; the second edits one file."""
    files = {
        p.relative_to(ROOT).as_posix(): p.read_text()
        for folder in ("ingest", "knowledge", "errkb/core")
        for p in sorted((ROOT / folder).rglob("*.py"))
    }
    repo = new_repo(root)
    edited = files[EDITED] + "\n\ndef _added(x):\n    assert x > 0\n    return _short(x)\n"
    shas = [commit(repo, "start", files, day=0), commit(repo, "edit", {EDITED: edited}, day=1)]
    repo.close()
    return shas


def _ingest(
    url: str, repo: Path, shas: list[str], cache: Path | None, workers: int = 1
) -> tuple[object, ...]:
    """The database's dump after ingesting the commits, and the origins its site bodies hold."""
    kept.forget()  # each run as a new process would start it
    engine = make_engine(url)
    try:
        job = Job(engine=engine, workers=workers, cache_dir=cache)
        for sha in shas:
            with GitSource(str(repo), sha, cache_dir=repo.parent / "git-cache") as source:
                summary = ingest_snapshot(source, PIN, PIN.extract_config(500_000), job)
            assert summary.status == "ingested" and summary.sites > 50
        with engine.connect() as conn:
            codes = conn.execute(select(SiteBody.code)).scalars().all()
        origins = sorted(json.dumps(unpacked_code(c)["snippet"].get("origin")) for c in codes)
        return dump(engine), origins
    finally:
        engine.dispose()


def test_a_store_gives_the_same_knowledge_and_spares_the_trace(
    three_dbs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = _history(tmp_path / "proj")
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path / "proj")
    alone = _ingest(three_dbs[0], tmp_path / "proj", shas, None)
    # module facts made on two parse processes
    filled = _ingest(three_dbs[1], tmp_path / "proj", shas, cache, workers=2)
    assert (cache / "origins" / FILE_NAME).is_file()

    def unread(*_: object) -> dict[str, str]:
        raise AssertionError("every origin is in the store: no file is read to trace")

    monkeypatch.setattr(site_origins, "snapshot_texts", unread)
    from_store = _ingest(three_dbs[2], tmp_path / "proj", shas, cache)
    assert alone == filled == from_store
    kinds = Counter(json.loads(o)["kind"] for o in alone[1] if o != "null")
    assert kinds.total() > 50 and kinds["internal"] > 0  # the origins are among what is compared
    # nothing written in the current folder (the project's checkout) beside its own files
    assert sorted(os.listdir(tmp_path / "proj")) == [".git", "errkb", "ingest", "knowledge"]
