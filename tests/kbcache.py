"""The sglang knowledge base that several test modules share, built once by the real pipeline.

Building it parses four real releases, so it is cached in a file keyed by a hash of the code that
writes it (ingest/, the core with its schema and search index, migrations, the pins) and
built under a file lock; each test session works on its own copy. The lock is what lets the
parallel test processes (pytest-xdist) share one build: the first builds, the others wait.
The PostgreSQL copy is cached the same way, as a database on the test server named by the same
hash (the tests only read it).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError

from errkb.core.db import make_engine, upgrade
from errkb.ingest import plan
from errkb.ingest.pins import load_pins
from errkb.ingest.pipeline import Job, ingest_snapshot

ROOT = Path(__file__).resolve().parent.parent
# The user's cache folder (XDG), never the checkout: wheels, knowledge bases and their locks.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "errkb-tests"
MAX_BYTES = 2_000_000
KEEP = 4  # cached builds kept: the newest, plus donors for the file cache


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def code_digest() -> str:
    """A hash of everything that decides the knowledge base's contents."""
    files = [ROOT / "errkb" / "pins.toml"]
    for folder in ("errkb/core", "ingest", "migrations"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return _digest(files)


def extraction_digest() -> str:
    """A hash of the code whose output the file cache holds (per-file extraction only)."""
    files = sorted((ROOT / "ingest" / "extract").rglob("*.py"))
    files += [ROOT / "errkb" / "core" / "records.py"]
    return _digest(files)


def docs_digest() -> str:
    """A hash of the code that builds and stores entry docs (the knowledge code, the entry
    schema and its builders, the doc store), beyond what `code_digest` covers."""
    files = []
    for folder in ("knowledge", "service/entries", "service/docstore"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return _digest(files)


def ingest_release(job: Job, spec: str, cache_dir: Path, repo: str | None = None) -> None:
    """Ingest one PyPI release (`name==version`) by the pipeline, as `errkb ingest --pypi` does;
    the tests' and the benches' knowledge bases are all built by this."""
    pins = load_pins(ROOT / "pins.toml")
    repo_pin, make = plan.pypi_planned(spec, pins, repo, cache_dir, MAX_BYTES)
    source = make()
    try:
        ingest_snapshot(source, repo_pin, repo_pin.extract_config(MAX_BYTES), job)
    finally:
        source.close()


def ingest_pinned_releases(
    url: str, cache_dir: Path = CACHE, versions: tuple[str, ...] | None = None
) -> None:
    """Ingest every pinned release in pins.toml, or the given versions of each pinned PyPI
    project (never git: tests must not need the network)."""
    engine = make_engine(url)
    try:
        upgrade(engine)
        pins = load_pins(ROOT / "pins.toml")
        job = Job(engine=engine, cache_dir=cache_dir)
        for repo in pins.repos:
            for version in (versions or repo.releases) if repo.pypi_name else ():
                ingest_release(job, f"{repo.pypi_name}=={version}", cache_dir, repo.name)
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        engine.dispose()


def sglang_kb_file() -> Path:
    """The cached SQLite knowledge base for the current code, built if missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    extraction = extraction_digest()
    target = CACHE / f"kb-{code_digest()}-x{extraction}.sqlite3"
    with open(CACHE / "kb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time; the others wait and reuse
        if not target.exists():
            _remove_leftovers()
            partial = target.with_suffix(f".building-{os.getpid()}")
            url = f"sqlite:///{partial}"
            # Same extraction code: reuse an older build's parse results, rebuild the rest.
            donors = sorted(CACHE.glob(f"kb-*-x{extraction}.sqlite3"), key=os.path.getmtime)
            if donors:
                engine = make_engine(url)
                upgrade(engine)
                engine.dispose()
                copy_file_cache(f"sqlite:///{donors[-1]}", url)
            ingest_pinned_releases(url)
            os.replace(partial, target)
            _remove_leftovers()
            builds = sorted(CACHE.glob("kb-*-x*.sqlite3"), key=os.path.getmtime)
            for old in builds[:-KEEP]:
                old.unlink(missing_ok=True)  # sessions work on copies: old builds are unused
    return target


def sglang_kb_docs_file() -> Path:
    """The cached knowledge base with every entry doc stored as `errkb ingest` stores them with
    no public URL, built if missing. It is keyed by `docs_digest` too: a change to the code that
    derives the docs builds them all again."""
    from errkb.core.settings import Settings
    from errkb.service.entries.docs import materialize_entries

    kb = sglang_kb_file()
    target = CACHE / f"docs-{kb.stem.removeprefix('kb-')}-k{docs_digest()}.sqlite3"
    with open(CACHE / "kb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _remove_leftovers()
            partial = target.with_suffix(f".building-{os.getpid()}")
            shutil.copyfile(kb, partial)
            url = f"sqlite:///{partial}"
            materialize_entries(Settings(database_url=url, public_url="", llm_model=""))
            engine = make_engine(url)
            with engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
            engine.dispose()
            os.replace(partial, target)
            _remove_leftovers()
            for old in sorted(CACHE.glob("docs-*.sqlite3"), key=os.path.getmtime)[:-2]:
                old.unlink(missing_ok=True)
    return target


def releases_kb_file(versions: tuple[str, ...]) -> Path:
    """A cached SQLite knowledge base of exactly these releases, built if missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / f"releases-{'_'.join(versions)}-{code_digest()}.sqlite3"
    with open(CACHE / "kb.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _remove_leftovers()
            partial = target.with_suffix(f".building-{os.getpid()}")
            ingest_pinned_releases(f"sqlite:///{partial}", versions=versions)
            os.replace(partial, target)
            _remove_leftovers()
            for old in CACHE.glob(f"releases-{'_'.join(versions)}-*.sqlite3"):
                if old != target:
                    old.unlink(missing_ok=True)
    return target


def _remove_leftovers() -> None:
    """Partial builds a killed run left, and the migration lock files of builds that are gone
    (`upgrade` locks a SQLite file through a `.migrate-lock` beside it). Called under the
    cache's lock, so no build is running."""
    for stale in CACHE.glob("*.building-*"):
        stale.unlink(missing_ok=True)
    for lock in CACHE.glob("*.migrate-lock"):
        if not lock.with_name(lock.name.removesuffix(".migrate-lock")).exists():
            lock.unlink(missing_ok=True)


def copy_kb(dest: Path, *, docs: bool = False) -> str:
    """A private copy of the cached knowledge base (`docs`: with its entry docs stored); returns
    its SQLAlchemy URL."""
    shutil.copyfile(sglang_kb_docs_file() if docs else sglang_kb_file(), dest)
    return f"sqlite:///{dest}"


def copy_file_cache(src_url: str, dest_url: str) -> None:
    """Seed a database's file cache from another (content-addressed rows: safe to share), with
    the dictionaries its rows are packed with."""
    src, dest = make_engine(src_url), make_engine(dest_url)
    try:
        with src.connect() as conn:
            query = text("SELECT id, key_check, extractor, result FROM file_cache")
            rows = [dict(r._mapping) for r in conn.execute(query)]
            query = text("SELECT id, purpose, samples, data FROM pack_dictionaries")
            dictionaries = [dict(r._mapping) for r in conn.execute(query)]
        with dest.begin() as conn:
            if dictionaries:
                conn.execute(
                    text(
                        "INSERT INTO pack_dictionaries (id, purpose, samples, data) "
                        "VALUES (:id, :purpose, :samples, :data) ON CONFLICT (id) DO NOTHING"
                    ),
                    dictionaries,
                )
            for start in range(0, len(rows), 500):
                conn.execute(
                    text(
                        "INSERT INTO file_cache (id, key_check, extractor, result) "
                        "VALUES (:id, :key_check, :extractor, :result) "
                        "ON CONFLICT (id) DO NOTHING"
                    ),
                    rows[start : start + 500],
                )
    finally:
        src.dispose()
        dest.dispose()


PG_PREFIX = "errkb_kb_"


def sglang_kb_pg_url(admin_url: str) -> str:
    """The pinned releases ingested into a PostgreSQL database on the server of `admin_url`,
    kept there between runs and keyed by `code_digest`: built once (under the file lock, its file
    cache seeded from the SQLite build), then shared by every test process and later runs. Older
    builds are dropped when a new one is made."""
    kb = sglang_kb_file()
    name = f"{PG_PREFIX}{code_digest()}"
    base = admin_url.rsplit("/", 1)[0]
    admin = make_engine(admin_url).execution_options(isolation_level="AUTOCOMMIT")
    try:
        with open(CACHE / "kb-pg.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            with admin.connect() as conn:
                held = conn.execute(
                    text("SELECT datname FROM pg_database WHERE datname LIKE :p"),
                    {"p": f"{PG_PREFIX}%"},
                ).scalars()
                names = set(held)
                if name not in names:
                    for old in names:  # older builds, and one a killed run left half made
                        _drop_unused(conn, old)
                    partial = f"{name}_building"
                    conn.execute(text(f'CREATE DATABASE "{partial}"'))
                    url = f"{base}/{partial}"
                    engine = make_engine(url)
                    upgrade(engine)
                    engine.dispose()
                    copy_file_cache(f"sqlite:///{kb}", url)
                    ingest_pinned_releases(url)
                    # Renamed only once whole: a database of this name is a finished build.
                    conn.execute(text(f'ALTER DATABASE "{partial}" RENAME TO "{name}"'))
    finally:
        admin.dispose()
    return f"{base}/{name}"


def _drop_unused(conn: Connection, name: str) -> None:
    """Drop a database unless someone is connected to it (a run of other code may still be
    reading an older build: it is dropped by a later build instead)."""
    try:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
    except OperationalError:
        pass
