"""Migration 0004 converts an existing database: a knowledge base written with one full
occurrence row per snapshot per site (revision 0003) upgrades to slim occurrences and shared
site bodies equal, row for row, to what the ingester writes itself; and back."""

from __future__ import annotations

import json
from pathlib import Path

from alembic import command
from dbdump import dump
from knowledge_repo import SWA_MESSAGE, ingest_small_repo, literal_id
from sqlalchemy import func, inspect, select

from errkb.core.db import alembic_config, make_engine, session_factory
from errkb.core.models import Occurrence, SiteBody
from errkb.service.entries.build import build_entry


def test_old_occurrence_rows_upgrade_to_the_bodies_the_ingester_writes(
    own_db: str, tmp_path: Path
) -> None:
    ingest_small_repo(own_db, tmp_path / "src")
    engine = make_engine(own_db)
    try:
        written = dump(engine)
        with session_factory(engine)() as s:
            entry = build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json()
            assert s.scalar(select(func.count()).select_from(SiteBody)) < s.scalar(
                select(func.count()).select_from(Occurrence)
            )  # unchanged sites share their body across the two versions

        command.downgrade(alembic_config(engine), "0003_error_flags")
        columns = {c["name"] for c in inspect(engine).get_columns("occurrences")}
        assert {"conditions", "snippet", "flags", "raise_source"} <= columns
        assert "site_bodies" not in inspect(engine).get_table_names()

        command.upgrade(alembic_config(engine), "head")
        # Later revisions' columns are dropped on the way down by design: the repo vocabulary,
        # the parse cache (0010 keeps hashes of its keys, which cannot go back down), each
        # error's class chain and each snapshot's per-class counts (0011, which the ingester
        # writes again on its next run). Every other row comes back as the ingester wrote it.
        assert _without_later_columns(dump(engine)) == _without_later_columns(written)
        assert written["file_cache"] and dump(engine)["file_cache"] == []
        with session_factory(engine)() as s:
            assert build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json() == entry
    finally:
        engine.dispose()


_LATER_COLUMNS = {
    "repos": ("vocabulary",),
    "errors": ("chain",),
    "snapshots": ("site_counts", "requirements"),  # 0011 and 0015
}


def _without_later_columns(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    """The dump without the parse cache and without the columns that revisions after 0004
    add and drop again on their way down."""
    kept = {t: rows for t, rows in tables.items() if t != "file_cache"}
    for table, columns in _LATER_COLUMNS.items():
        rows = [json.loads(row) for row in tables[table]]
        for row in rows:
            for column in columns:
                row.pop(column, None)
        kept[table] = [json.dumps(r, sort_keys=True) for r in rows]
    return kept
