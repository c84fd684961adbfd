"""Alembic environment: runs on the engine handed over by `errkb.core.db.upgrade`, or ERRKB_DATABASE_URL."""

from __future__ import annotations

from alembic import context

from errkb.core.db import engine_from_settings
from errkb.core.models import Base
from errkb.core.settings import Settings

config = context.config


def _include_name(name, type_, parent_names) -> bool:  # type: ignore[no-untyped-def]
    # The full-text search objects (search_docs, FTS5 shadow tables, the tsvector index) are
    # backend-specific DDL owned by the search-index migration, not ORM models.
    return not (name or "").startswith(("search_", "ix_search_"))


engine = config.attributes.get("engine") or engine_from_settings(Settings())

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=_include_name,
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
