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
        # The repo vocabulary (a later revision) is dropped on the way down by design, and so is
        # the parse cache (0010 keeps hashes of its keys, which cannot go back down); every
        # other row comes back as the ingester wrote it.
        assert _without_vocabulary(dump(engine)) == _without_vocabulary(written)
        assert written["file_cache"] and dump(engine)["file_cache"] == []
        with session_factory(engine)() as s:
            assert build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json() == entry
    finally:
        engine.dispose()


def _without_vocabulary(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    """The dump with each repo row's vocabulary and the parse cache left out."""
    repos = [json.loads(row) for row in tables["repos"]]
    for repo in repos:
        repo.pop("vocabulary", None)
    kept = {t: rows for t, rows in tables.items() if t != "file_cache"}
    return {**kept, "repos": [json.dumps(r, sort_keys=True) for r in repos]}
