"""Engines, sessions and schema upgrades; nothing here runs at import time.

Several server processes may start at once on an empty database, so `upgrade` runs under a
lock that every process can see: an advisory lock on PostgreSQL, an exclusive file lock beside
the SQLite file. The first process migrates; the others wait, then find the schema at head.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from errkb.core.errors import ConfigError, SchemaBehind
from errkb.core.settings import Settings

if TYPE_CHECKING:  # alembic is imported by the functions that migrate: a quarter of a second
    # that every command paid at start-up, most of them never migrating
    from alembic.config import Config

# A fixed 64-bit key for pg_advisory_lock, derived from a name so it says whose lock it is.
MIGRATION_LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"errkb.migrate").digest()[:8], "big", signed=True
)


SQLITE_PAGE_SIZE = 16384


def make_engine(url: str, *, create_folders: bool = True) -> Engine:
    """Create an engine; SQLite gets WAL mode, foreign keys and a busy timeout.

    ConfigError, before anything is written, for a URL that is not one, a database other than
    SQLite or PostgreSQL, or a SQLite file that cannot be created (its missing folders are made
    only with `create_folders`).
    """
    parsed = database_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_path(url)
        if path is not None:
            _check_sqlite_file(path, create_folders)
        engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    # The psycopg 3 driver, also for the short scheme that Heroku and others hand out.
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            url = "postgresql+psycopg://" + url.removeprefix(scheme)
    return create_engine(url, pool_pre_ping=True)


SUPPORTED = "use sqlite:///PATH or postgresql://USER@HOST/NAME"


def database_url(url: str) -> URL:
    """The parsed URL of a database errkb can use; ConfigError for anything else."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            f"ERRKB_DATABASE_URL {url!r} is not a database URL: {SUPPORTED}"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql", "postgres"):
        raise ConfigError(
            f"errkb works with SQLite and PostgreSQL, not {backend}: set ERRKB_DATABASE_URL "
            f"to a supported database ({SUPPORTED})"
        )
    return parsed


def display_url(url: str) -> str:
    """The database URL as a person may see it: without its password."""
    return make_url(url).render_as_string(hide_password=True)


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (None for an in-memory database)."""
    path = url.split("///", 1)[-1] if "///" in url else ""
    return Path(path) if path and path != ":memory:" else None


def _check_sqlite_file(path: Path, create_folders: bool) -> None:
    """Make sure SQLite will be able to open or create `path` (ConfigError if not)."""
    if path.is_dir():
        raise ConfigError(f"the SQLite database {path} is a folder: name a file in it instead")
    if path.exists():
        return
    if not path.parent.is_dir():
        if not create_folders:
            raise ConfigError(
                f"there is no folder {path.parent} for the SQLite database {path}: create it, "
                "or correct ERRKB_DATABASE_URL (errkb ingest creates it)"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the folder {path.parent}: {exc.strerror}") from None
    # Permission bits do not tell (root may write anywhere, yet not in /proc): try it.
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return  # another process created it meanwhile
    except OSError as exc:
        raise ConfigError(
            f"cannot create the SQLite database {path}: {exc.strerror} "
            "(choose another ERRKB_DATABASE_URL)"
        ) from None
    os.unlink(path)  # SQLite creates it itself, with its own page size


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
    cur = dbapi_conn.cursor()
    # Only a new file takes it (before its first write). Most rows are a blob of a few
    # kilobytes (parse results, site bodies, entry docs); at SQLite's default 4 KiB page a page
    # often holds one such row and a gap, and a whole history's database takes a twentieth more.
    cur.execute(f"PRAGMA page_size={SQLITE_PAGE_SIZE}")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def engine_from_settings(settings: Settings, *, create_folders: bool = False) -> Engine:
    """The engine for the configured database URL.

    Missing folders of a SQLite path are created for the default location under the data
    folder, or when the caller means to build a knowledge base there (`create_folders`); a
    server started on a mistyped path should fail, not serve a new empty database.
    """
    create = create_folders or not settings.database_url
    return make_engine(settings.resolved_database_url, create_folders=create)


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to this engine's connection."""
    from alembic.config import Config

    cfg = Config()
    # The migrations ship inside the package (`errkb.migrations`), wherever it is installed.
    cfg.set_main_option("script_location", "errkb.migrations:")
    cfg.attributes["engine"] = engine
    return cfg


@contextmanager
def migration_lock(engine: Engine) -> Iterator[None]:
    """Hold the database-wide migration lock (blocks until no other process holds it)."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
                conn.commit()
        return
    path = sqlite_path(str(engine.url)) if engine.dialect.name == "sqlite" else None
    if path is None:  # in-memory SQLite: one process only
        yield
        return
    with open(path.with_name(path.name + ".migrate-lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def upgrade(engine: Engine) -> None:
    """Apply every migration up to head, under the migration lock."""
    from alembic import command

    with migration_lock(engine):
        command.upgrade(alembic_config(engine), "head")


def schema_revisions(engine: Engine) -> tuple[set[str], set[str]]:
    """(the database's current revisions, the code's head revisions)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = set(ScriptDirectory.from_config(alembic_config(engine)).get_heads())
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current, heads


def require_current_schema(engine: Engine) -> None:
    """Raise SchemaBehind unless the database is at the code's head revision."""
    current, heads = schema_revisions(engine)
    if current != heads:
        at = ", ".join(sorted(current)) or "no schema"
        raise SchemaBehind(
            f"the database schema is behind this errkb ({at}; needs {', '.join(sorted(heads))}): "
            "run `errkb db upgrade`, or set ERRKB_AUTO_MIGRATE=true"
        )


def prepare_schema(engine: Engine, settings: Settings) -> None:
    """Migrate (under the lock) when auto-migration is on, else require the schema at head."""
    if settings.auto_migrate:
        upgrade(engine)
    else:
        require_current_schema(engine)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """A sessionmaker bound to the engine."""
    return sessionmaker(engine, expire_on_commit=False)
