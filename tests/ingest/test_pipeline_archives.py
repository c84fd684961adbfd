"""Release archives on real databases: a member unchanged since an earlier release is settled by
the digest of its compressed stream, never inflated, and the knowledge stored is the same as
when every member is read."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import drop_pg, fresh_pg_url
from dbdump import dump
from sqlalchemy import Engine, select

import errkb.ingest.sources.pypi as pypi
from errkb.core.db import make_engine, upgrade
from errkb.core.models import Flag
from errkb.ingest.file_results import FileResults
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, SnapshotSummary, ingest_snapshot
from errkb.ingest.sources.pypi import PypiSource

PIN = RepoPin(name="tests/archives")
V1 = {
    "demo/a.py": b"def f(x):\n    if x < 0:\n        raise ValueError(f'negative {x}')\n",
    "demo/b.py": b"def g(mode):\n    raise ValueError('bad mode ' + mode)\n",
    "demo/cli.py": (
        b"import argparse\n\ndef parser():\n    p = argparse.ArgumentParser()\n"
        b"    p.add_argument('--tp-size', type=int, default=1)\n    return p\n\n"
        b"def check(args):\n    if args.tp_size < 1:\n"
        b"        raise ValueError('--tp-size must be positive')\n"
    ),
    "demo/quiet.py": b"x = 1\n",  # settled by the byte prefilter
    "demo/nul.py": b"raise ValueError('a')\x00\n",  # rejected for its NUL byte
    "demo/same.py": b"def f(x):\n    if x < 0:\n        raise ValueError(f'negative {x}')\n",
}
V2 = V1 | {
    "demo/b.py": b"def g(mode):\n    raise ValueError('unknown mode ' + mode)\n",  # edited
    "demo/c.py": b"def h():\n    raise ValueError('new in 2.0')\n",  # added
}


def _wheel(folder: Path, version: str, members: dict[str, bytes]) -> Path:
    path = folder / f"demo-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _ingest(engine: Engine, wheel: Path, version: str) -> SnapshotSummary:
    source = PypiSource("demo", version, cache_dir=wheel.parent, archive=wheel)
    return ingest_snapshot(source, PIN, PIN.extract_config(500_000), Job(engine, workers=1))


@contextmanager
def _another_database(db_url: str, tmp_path: Path) -> Iterator[Engine]:
    """An empty migrated database on the same backend as `db_url`."""
    url = f"sqlite:///{tmp_path / 'other.sqlite3'}" if db_url.startswith("sqlite") else None
    url = url or fresh_pg_url()
    engine = make_engine(url)
    upgrade(engine)
    try:
        yield engine
    finally:
        engine.dispose()
        if not url.startswith("sqlite"):
            drop_pg(url)


def test_unchanged_members_are_settled_unread_and_store_the_same(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = [_wheel(tmp_path, "1.0", V1), _wheel(tmp_path, "2.0", V2)]
    inflated: list[str] = []
    real_inflated = pypi._inflated

    def counting(info: zipfile.ZipInfo, packed: bytes) -> bytes:
        inflated.append(info.filename)
        return real_inflated(info, packed)

    monkeypatch.setattr(pypi, "_inflated", counting)
    engine = make_engine(db_url)
    try:
        first = _ingest(engine, wheels[0], "1.0")
        assert sorted(inflated) == sorted(V1)
        inflated.clear()
        second = _ingest(engine, wheels[1], "2.0")
        # Only the edited and the added member are read; the prefiltered and rejected ones
        # are settled by their cached early results too.
        assert sorted(inflated) == ["demo/b.py", "demo/c.py"]
        assert (first.files, second.files) == (6, 7)
        assert (second.prefiltered, second.skipped) == (1, {"null_bytes": 1})
        assert (second.files_parsed, second.cache_hits) == (2, 3)  # a, same and cli are hits
        assert second.sites == 5
        known = dump(engine)
    finally:
        engine.dispose()

    # The same two releases with every member read give the same knowledge.
    inflated.clear()
    monkeypatch.setattr(FileResults, "known", lambda self, members: {})
    with _another_database(db_url, tmp_path) as other:
        _ingest(other, wheels[0], "1.0")
        unread = _ingest(other, wheels[1], "2.0")
        assert len(inflated) == len(V1) + len(V2)
        assert (unread.files_parsed, unread.cache_hits) == (2, 3)
        assert {k: v for k, v in dump(other).items() if k != "file_cache"} == {
            k: v for k, v in known.items() if k != "file_cache"
        }


def test_a_member_known_by_content_but_not_by_stream_is_read(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bytes compressed otherwise have another digest: read, then a cache hit."""
    first = tmp_path / "one"
    first.mkdir()
    _ingest(engine, _wheel(first, "1.0", V1), "1.0")
    second = tmp_path / "two"
    second.mkdir()
    stored = second / "demo-2.0-py3-none-any.whl"
    with zipfile.ZipFile(stored, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in V1.items():
            zf.writestr(name, data)
    inflated: list[str] = []
    real_inflated = pypi._inflated
    monkeypatch.setattr(
        pypi,
        "_inflated",
        lambda info, packed: inflated.append(info.filename) or real_inflated(info, packed),
    )
    summary = _ingest(engine, stored, "2.0")
    assert sorted(inflated) == sorted(V1)
    assert (summary.files_parsed, summary.cache_hits, summary.sites) == (0, 4, 4)


def test_same_bytes_at_a_path_needing_its_own_result_are_read(
    engine: Engine, tmp_path: Path
) -> None:
    """Under a path-glob flag class, the same member at a matching path has a result of its own
    (`result_id`): its digest is known from the other copy, yet it must be extracted."""
    fields = (
        b"class CacheFields:\n    cache_size: int = 8\n\n"
        b"def check(n):\n    if n < 0:\n        raise ValueError('negative size')\n"
    )
    pin = RepoPin(name="tests/globs", flag_classes=["*/fields/*.py:*"])
    wheels = [
        _wheel(tmp_path, "1.0", {"demo/other/cache.py": fields}),
        _wheel(tmp_path, "2.0", {"demo/fields/cache.py": fields, "demo/other/cache.py": fields}),
    ]
    summaries = [
        ingest_snapshot(
            PypiSource("demo", version, cache_dir=tmp_path, archive=wheel),
            pin,
            pin.extract_config(500_000),
            Job(engine, workers=1),
        )
        for version, wheel in zip(("1.0", "2.0"), wheels, strict=True)
    ]
    assert [(s.files_parsed, s.cache_hits, s.sites) for s in summaries] == [(1, 0, 1), (1, 1, 2)]
    with engine.connect() as conn:
        flags = conn.execute(select(Flag.path, Flag.name)).all()
    assert flags == [("demo/fields/cache.py", "--cache-size")]
