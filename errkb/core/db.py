"""Engines, sessions and schema upgrades; nothing here runs at import time."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from errkb.core.settings import Settings


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets WAL mode, foreign keys and a busy timeout."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return create_engine(url, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def engine_from_settings(settings: Settings) -> Engine:
    """The engine for the configured database URL."""
    return make_engine(settings.resolved_database_url)


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to this engine's connection."""
    cfg = Config()
    # The migrations ship inside the package (`errkb.migrations`), wherever it is installed.
    cfg.set_main_option("script_location", "errkb.migrations:")
    cfg.attributes["engine"] = engine
    return cfg


def upgrade(engine: Engine) -> None:
    """Apply every migration up to head."""
    command.upgrade(alembic_config(engine), "head")


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """A sessionmaker bound to the engine."""
    return sessionmaker(engine, expire_on_commit=False)
