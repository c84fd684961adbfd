"""The sglang knowledge bases that several test modules share, built once by the real pipeline.

Building one parses real releases, so each is cached in a file keyed by a hash of the code that
writes it (ingest/, the core with its schema and search index, migrations, the pins) and built
under a file lock of its own; each test session works on its own copy. The locks are what let the
parallel test processes (pytest-xdist) share the builds: the first process to need a base builds
it, the others wait for that base alone, so the PostgreSQL copy, the extended base and the stored
documents are built side by side once the shared base exists.
The PostgreSQL copy is cached the same way, as a database on the test server named by the same
hash (the tests only read it).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def files_digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def code_digest() -> str:
    """A hash of everything that decides the knowledge base's contents."""
    files = [ROOT / "errkb" / "pins.toml"]
    for folder in ("errkb/core", "ingest", "migrations"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files_digest(files)


def extraction_digest() -> str:
    """A hash of the code whose output the file cache holds (per-file extraction only)."""
    files = sorted((ROOT / "ingest" / "extract").rglob("*.py"))
    files += [ROOT / "errkb" / "core" / "records.py"]
    return files_digest(files)


def docs_digest() -> str:
    """A hash of the code that builds and stores entry docs (the knowledge code, the entry
    schema and its builders, the doc store), beyond what `code_digest` covers."""
    files = []
    for folder in ("knowledge", "service/entries", "service/docstore"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files_digest(files)


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
    finally:
        engine.dispose()
    if url.startswith("sqlite"):
        _checkpoint(url)


@contextmanager
def _build_lock(name: str) -> Iterator[None]:
    """One build's lock (`<name>.lock` in the cache): the processes that need the same base wait
    for its builder, the others go on."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def built_once(target: Path, prefix: str, keep: int, build: Callable[[Path], None]) -> Path:
    """`target` built by `build(partial)` if missing, under the lock of its kind (`prefix`: the
    start of its name), and the older builds of that kind past the newest `keep` removed
    (sessions work on copies, so old builds are unused)."""
    with _build_lock(prefix):
        if not target.exists():
            _remove_leftovers(prefix)
            partial = target.with_suffix(f".building-{os.getpid()}")
            build(partial)
            os.replace(partial, target)
            _remove_leftovers(prefix)
            builds = sorted(CACHE.glob(f"{prefix}-*{target.suffix}"), key=os.path.getmtime)
            for old in builds[:-keep]:
                old.unlink(missing_ok=True)
    return target


def sglang_kb_target() -> Path:
    """Where the shared knowledge base of the current code is kept (built or not)."""
    return CACHE / f"kb-{code_digest()}-x{extraction_digest()}.sqlite3"


def sglang_kb_file() -> Path:
    """The cached SQLite knowledge base for the current code, built if missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    extraction = extraction_digest()

    def build(partial: Path) -> None:
        url = f"sqlite:///{partial}"
        # Same extraction code: reuse an older build's parse results, rebuild the rest.
        donors = sorted(CACHE.glob(f"kb-*-x{extraction}.sqlite3"), key=os.path.getmtime)
        if donors:
            engine = make_engine(url)
            upgrade(engine)
            engine.dispose()
            copy_file_cache(f"sqlite:///{donors[-1]}", url)
        ingest_pinned_releases(url)

    return built_once(sglang_kb_target(), "kb", KEEP, build)


def sglang_kb_docs_file() -> Path:
    """The cached knowledge base with every entry doc stored as `errkb ingest` stores them with
    no public URL, built if missing. It is keyed by `docs_digest` too: a change to the code that
    derives the docs builds them all again."""
    from errkb.core.settings import Settings
    from errkb.service.entries.docs import materialize_entries

    kb = sglang_kb_file()

    def build(partial: Path) -> None:
        shutil.copyfile(kb, partial)
        url = f"sqlite:///{partial}"
        materialize_entries(Settings(database_url=url, public_url="", llm_model=""))
        _checkpoint(url)

    target = CACHE / f"docs-{kb.stem.removeprefix('kb-')}-k{docs_digest()}.sqlite3"
    return built_once(target, "docs", 2, build)


# Releases beyond the pins that a few modules need, added to a copy of the shared base: 0.5.17,
# the release before the reference error appears (its exact timeline), and 0.5.10, the only
# release still raising two errors of the match-dev cases (`spec-mamba-no-buffer-radix-title`,
# `nan-in-logits-log-line`).
EXTENDED_RELEASES = ("0.5.10", "0.5.17")


def sglang_kb_extended_file() -> Path:
    """The cached shared knowledge base with EXTENDED_RELEASES ingested too, built if missing
    (from a copy of the shared base: only the extra releases are ingested)."""
    kb = sglang_kb_file()

    def build(partial: Path) -> None:
        shutil.copyfile(kb, partial)
        ingest_pinned_releases(f"sqlite:///{partial}", versions=EXTENDED_RELEASES)
        # What this base replaced (the timeline's own four releases, the match tests' own copy),
        # as built by older code: a run of this code's age may still be reading them.
        for old in (*CACHE.glob("releases-*.sqlite3"), *CACHE.glob("kb-*-match-*.sqlite3")):
            if code_digest() not in old.name:
                old.unlink(missing_ok=True)

    target = CACHE / f"extended-{'_'.join(EXTENDED_RELEASES)}-{code_digest()}.sqlite3"
    return built_once(target, "extended", 1, build)


def _checkpoint(url: str) -> None:
    """Every page of a SQLite database in its one file (copies of it then need nothing else)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        engine.dispose()


def _remove_leftovers(prefix: str) -> None:
    """Partial builds of this kind that a killed run left, and the migration lock files of its
    builds that are gone (`upgrade` locks a SQLite file through a `.migrate-lock` beside it).
    Called under the kind's lock, so none of its builds is running."""
    for stale in CACHE.glob(f"{prefix}-*.building-*"):
        stale.unlink(missing_ok=True)
    for lock in CACHE.glob(f"{prefix}-*.migrate-lock"):
        if not lock.with_name(lock.name.removesuffix(".migrate-lock")).exists():
            lock.unlink(missing_ok=True)


def copy_kb(dest: Path, *, docs: bool = False, extended: bool = False) -> str:
    """A private copy of the cached knowledge base (`docs`: with its entry docs stored;
    `extended`: with EXTENDED_RELEASES too); returns its SQLAlchemy URL."""
    if docs:
        source = sglang_kb_docs_file()
    else:
        source = sglang_kb_extended_file() if extended else sglang_kb_file()
    shutil.copyfile(source, dest)
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
        with _build_lock("kb-pg"):
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
