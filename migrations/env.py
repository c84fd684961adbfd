"""Alembic environment: runs on the engine handed over by `errkb.db.upgrade`, or ERRKB_DATABASE_URL."""

from __future__ import annotations

from alembic import context

from errkb.db import engine_from_settings
from errkb.models import Base
from errkb.settings import Settings

config = context.config
engine = config.attributes.get("engine") or engine_from_settings(Settings())

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
