"""After a big ingest the SQLite file is rewritten without its free pages (store.compact);
PostgreSQL is left to its autovacuum."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select, text
from typer.testing import CliRunner

from errkb.core.db import make_engine, upgrade
from errkb.core.models import Error
from errkb.ingest import store
from errkb.service.cli import ingest as ingest_cli
from errkb.service.cli.main import app

RAISING = "def f(n):\n    if n < 0:\n        raise ValueError(f'n must be >= 0, got {n}')\n"


def test_compact_drops_free_pages_and_keeps_the_rows(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine)
        with engine.begin() as conn:  # 4 MB written, then deleted: free pages in the file
            conn.execute(
                text("INSERT INTO meta (key, value) VALUES (:k, :v)"),
                [{"k": f"pad{i}", "v": "x" * 4000} for i in range(1000)],
            )
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM meta WHERE key LIKE 'pad%'"))
            conn.execute(text("INSERT INTO meta (key, value) VALUES ('kept', 'yes')"))
        sizes = store.compact(engine)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT value FROM meta WHERE key = 'kept'")).scalar() == "yes"
    finally:
        engine.dispose()
    if engine.dialect.name == "postgresql":
        assert sizes is None
    else:
        assert sizes is not None
        before, after = sizes
        assert after < before - 3_000_000


def test_an_ingest_of_many_snapshots_compacts_the_file(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ERRKB_DATABASE_URL", db_url)
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ERRKB_WORKERS", "1")
    monkeypatch.setattr(ingest_cli, "COMPACT_AFTER", 1)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text(RAISING)
    result = CliRunner().invoke(
        app, ["ingest", "--dir", str(tmp_path / "src"), "--label", "v1"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    compacted = "Compacted the database file from" in result.output
    assert compacted == db_url.startswith("sqlite")
    engine = make_engine(db_url)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Error)).scalar() == 1
    engine.dispose()
