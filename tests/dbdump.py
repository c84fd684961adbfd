"""A full, ordered dump of a database's contents, minus surrogate ids and run-dependent fields.

Two databases that hold the same knowledge dump equal, whatever order or runs produced them:
snapshot and repo ids are replaced by their natural keys, timings and cache counters dropped.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine, select

from errkb.core.models import Base, Repo, Snapshot

# Depend on how a run went (timing, what the cache already held), not on what is known.
RUN_FIELDS = {"ingested_at", "seconds", "files_parsed", "cache_hits", "created_at"}
# Meta rows that record how the last entry-doc build went, not what is known.
RUN_META = {"entry_docs_build", "entry_docs_checked"}


def dump(engine: Engine) -> dict[str, list[str]]:
    """table -> sorted JSON rows."""
    out: dict[str, list[str]] = {}
    with engine.connect() as conn:
        repos = dict(conn.execute(select(Repo.id, Repo.name)).all())
        snaps = {
            sid: f"{repos[rid]}:{kind}:{commit}"
            for sid, rid, kind, commit in conn.execute(
                select(Snapshot.id, Snapshot.repo_id, Snapshot.kind, Snapshot.commit)
            )
        }
        for table in Base.metadata.sorted_tables:
            rows = []
            for row in conn.execute(select(table)).mappings():
                if table.name == "meta" and row.get("key") in RUN_META:
                    continue
                item: dict[str, Any] = {}
                for key, value in row.items():
                    if key in RUN_FIELDS or (key == "id" and isinstance(value, int)):
                        continue
                    if key == "snapshot_id":
                        value = snaps[value]
                    elif key == "repo_id":
                        value = repos[value]
                    elif isinstance(value, bytes | memoryview):
                        value = bytes(value).hex()
                    item[key] = value
                rows.append(json.dumps(item, sort_keys=True, default=str))
            out[table.name] = sorted(rows)
    return out
