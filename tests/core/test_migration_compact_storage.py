"""Migration 0007 converts an existing database: per-snapshot flag rows, site bodies with JSON
conditions and snippets, and the (snapshot, path, function) occurrence index (revision 0006)
upgrade to shared flag bodies, compressed site code and a snapshot index equal, row for row, to
what the ingester writes itself; and back."""

from __future__ import annotations

import json
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

        # The parse cache as revision 0006 kept it (a cache: migration 0010 cannot carry the
        # rows it holds at head back down, so these are written in 0006's shape).
        old_rows = {("4:a", "f" * 40), ("4:a", "u:" + "1" * 40), ("4:b", "stored:" + "2" * 40)}
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM file_cache"))
            for extractor, key in old_rows:
                conn.execute(
                    text("INSERT INTO file_cache VALUES (:h, :x, :r)"),
                    {"h": key, "x": extractor, "r": f"{extractor} {key}".encode()},
                )

        command.upgrade(alembic_config(engine), "head")
        assert _before_0011(dump(engine)) == _before_0011(written)
        for extractor in ("4:a", "4:b"):  # every row is found by its key, and only by it
            wanted = [k for x, k in old_rows if x == extractor]
            found = store.load_cache(engine, extractor, [*wanted, "f" * 40 + "0"])
            assert found == {k: f"{extractor} {k}".encode() for k in wanted}
        # 0010 marks the extractor whose rows include function units
        assert store.has_cached_units(engine, "4:a") and not store.has_cached_units(engine, "4:b")
        with session_factory(engine)() as s:
            assert build_entry(s, literal_id(SWA_MESSAGE)).model_dump_json() == entry
    finally:
        engine.dispose()


# Columns added after 0006 (revisions 0011 and 0015): a downgrade below them cannot keep them.
LATER_COLUMNS = ("chain", "kind", "check_text", "site_counts", "requirements")


def _before_0011(dumped: dict[str, list[str]]) -> dict[str, list[str]]:
    """The dump without the file cache and the columns 0006 does not have."""
    out = {}
    for table, rows in dumped.items():
        if table != "file_cache":
            items = [json.loads(r) for r in rows]
            out[table] = sorted(
                json.dumps({k: v for k, v in i.items() if k not in LATER_COLUMNS}, sort_keys=True)
                for i in items
            )
    return out
