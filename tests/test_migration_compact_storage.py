"""Migration 0007 converts an existing database: per-snapshot flag rows, site bodies with JSON
conditions and snippets, and the (snapshot, path, function) occurrence index (revision 0006)
upgrade to shared flag bodies, compressed site code and a snapshot index equal, row for row, to
what the ingester writes itself; and back."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from dbdump import dump
from knowledge_repo import SWA_MESSAGE, ingest_small_repo, literal_id
from sqlalchemy import func, inspect, select, text

from errkb.core.db import alembic_config, make_engine, session_factory
from errkb.core.models import FlagBody, SnapshotFlag
from errkb.ingest import store
from errkb.service.entries.build import build_entry


def test_flags_and_site_code_convert_to_what_the_ingester_writes_and_back(
    own_db: str, tmp_path: Path
) -> None:
    ingest_small_repo(own_db, tmp_path / "src")
    engine = make_engine(own_db)
    try:
        written = dump(engine)
        with session_factory(engine)() as s:
            entry = build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json()
            links = s.scalar(select(func.count()).select_from(SnapshotFlag))
            bodies = s.scalar(select(func.count()).select_from(FlagBody))
        assert links == 2 * bodies  # both versions define the same three flags

        command.downgrade(alembic_config(engine), "0006_repo_vocabulary")
        schema = inspect(engine)
        assert {"flag_bodies", "snapshot_flags"}.isdisjoint(schema.get_table_names())
        columns = {c["name"] for c in schema.get_columns("site_bodies")}
        assert {"conditions", "snippet"} <= columns and "code" not in columns
        indexes = {i["name"] for i in schema.get_indexes("occurrences")}
        assert "ix_occurrences_snapshot_qualname" in indexes
        with engine.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM flags")).scalar() == links
            kinds = conn.execute(text("SELECT conditions, snippet FROM site_bodies")).all()
            assert kinds and all(c is not None and s is not None for c, s in kinds)

        command.upgrade(alembic_config(engine), "head")
        assert dump(engine) == written
        with engine.connect() as conn:  # the rebuilt parse cache answers lookups by its keys
            keys = conn.execute(text("SELECT extractor, content_hash FROM file_cache")).all()
        for extractor in {x for x, _ in keys}:
            wanted = [h for x, h in keys if x == extractor]
            assert sorted(store.load_cache(engine, extractor, wanted)) == sorted(wanted)
        with session_factory(engine)() as s:
            assert build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json() == entry
    finally:
        engine.dispose()
