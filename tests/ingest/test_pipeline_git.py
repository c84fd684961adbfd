"""The git source end to end: stable ids across a move, new ids for edited messages, full-SHA
pins, and unchanged blobs never parsed or even read again (SQLite and PostgreSQL)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gitrepo import commit, new_repo
from sqlalchemy import Engine, select

import errkb.ingest.sources.git as git_source
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.git import GitSource

A = """def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
"""
B = """class Config:
    def validate(self):
        raise ValueError("mode is not supported")
"""
B_EDITED = B.replace("mode is not supported", "mode is not supported on this platform")
PLAIN = "VALUE = 1\n"


def _occurrences(engine: Engine, sha: str) -> dict[str, tuple[str, int]]:
    with engine.connect() as conn:
        rows = conn.execute(
            select(Occurrence.error_id, Occurrence.path, Occurrence.line)
            .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            .where(Snapshot.commit == sha)
        ).all()
    return {eid: (path, line) for eid, path, line in rows}


def test_git_history(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real_read = git_source.read_blob

    def counting(blob):  # type: ignore[no-untyped-def]
        read.append(blob.path)
        return real_read(blob)

    monkeypatch.setattr(git_source, "read_blob", counting)
    repo = new_repo(tmp_path / "proj")
    shas = [
        commit(repo, "start", {"pkg/a.py": A, "pkg/b.py": B, "pkg/plain.py": PLAIN}, day=0),
        commit(repo, "move a", {"pkg/a.py": None, "pkg/sub/a.py": A}, day=1),
        commit(repo, "edit b", {"pkg/b.py": B_EDITED}, day=2),
    ]
    repo.close()
    pin = RepoPin(name="tests/proj", web_url="https://example.test/tests/proj")
    job = Job(engine=engine, workers=1)
    summaries = []
    for sha in shas:
        with GitSource(
            str(tmp_path / "proj"), sha[:7], cache_dir=tmp_path / "cache", web_url=pin.web_url
        ) as source:
            summaries.append(ingest_snapshot(source, pin, pin.extract_config(100_000), job))
        read.append("|")

    # Commit 1 parses its two raising files; the move reuses both blobs; the edit parses one.
    # The plain file never reaches the cache: the byte prefilter settles it every time.
    assert [s.files_parsed for s in summaries] == [2, 0, 1]
    assert [s.cache_hits for s in summaries] == [0, 2, 1]
    assert [s.prefiltered for s in summaries] == [1, 1, 1]
    assert [s.sites for s in summaries] == [2, 2, 2]
    # Blobs whose results are cached (the plain file's early one included) are never read.
    assert read == ["pkg/a.py", "pkg/b.py", "pkg/plain.py", "|", "|", "pkg/b.py", "|"]

    with engine.connect() as conn:
        stored = conn.execute(
            select(Snapshot.commit, Snapshot.label, Snapshot.link_base).order_by(Snapshot.sort_key)
        ).all()
    assert [c for c, _, _ in stored] == shas
    assert all(re.fullmatch(r"[0-9a-f]{40}", c) for c, _, _ in stored)
    assert [label for _, label, _ in stored] == [f"{s[:7]}@{s[:10]}" for s in shas]
    assert stored[0][2] == f"https://example.test/tests/proj/blob/{shas[0]}/"

    first, moved, edited = (_occurrences(engine, s) for s in shas)
    assert set(first) == set(moved)  # the move keeps both ids
    a_id = next(i for i, (p, _) in first.items() if p == "pkg/a.py")
    assert moved[a_id] == ("pkg/sub/a.py", 3)
    b_id = next(i for i, (p, _) in first.items() if p == "pkg/b.py")
    assert b_id not in edited and a_id in edited
    new_id = next(iter(set(edited) - set(first)))
    assert edited[new_id] == ("pkg/b.py", 3)
    with engine.connect() as conn:
        messages = dict(conn.execute(select(Error.id, Error.message)).all())
    assert messages[b_id] == "mode is not supported"
    assert messages[new_id] == "mode is not supported on this platform"
    assert messages[a_id] == "x must be positive, got {x}"
