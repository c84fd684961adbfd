"""Shared fixtures: every database test runs on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import file_order
import pytest
import throwaway_pg
from sqlalchemy import Engine, text
from throwaway_pg import ThrowawayPostgres

from errkb.core.db import make_engine, upgrade
from errkb.core.models import Base

PG_ADMIN_URL = os.environ.get(
    "ERRKB_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
ROOT = Path(__file__).resolve().parent.parent
_throwaway: list[ThrowawayPostgres] = []  # the run's own server, when it had to start one
_admin_url: list[str] = []
_config: list[pytest.Config] = []
_timer: list[file_order.Timer] = []  # the main process's: each file's time in this run
_ORDER_ENV = "ERRKB_TEST_FILE_ORDER"


def pg_admin_url() -> str:
    """The PostgreSQL URL the tests create their databases from (checked once per run).

    When nothing answers at PG_ADMIN_URL, a throwaway server is started from the installed
    binaries (see `throwaway_pg`) and removed when the run ends; with no binaries either, the
    run stops with one line saying what to install.
    """
    if _admin_url:
        return _admin_url[0]
    url = PG_ADMIN_URL
    if not throwaway_pg.answers(url):
        bin_dir = throwaway_pg.binaries()
        if bin_dir is None:
            pytest.exit(f"no PostgreSQL answers at {url}: {throwaway_pg.INSTALL_HINT}", 4)
        server = ThrowawayPostgres(bin_dir)
        try:
            server.start()
        except subprocess.CalledProcessError as exc:
            server.stop()
            why = " ".join((exc.stderr or exc.stdout or "").split())[:300]
            pytest.exit(f"no PostgreSQL answers at {url}, and starting one failed: {why}", 4)
        _throwaway.append(server)
        url = server.admin_url
        _say(
            f"No PostgreSQL answers at {PG_ADMIN_URL}: started a throwaway one from "
            f"{bin_dir} at 127.0.0.1:{server.port} for this run (removed at the end)."
        )
    _admin_url.append(url)
    return url


def _say(line: str) -> None:
    """One line on the terminal's stderr, past pytest's output capture."""
    capture = _config[0].pluginmanager.getplugin("capturemanager") if _config else None
    if capture is None:
        sys.stderr.write(f"\n{line}\n")
        return
    with capture.global_and_fixture_disabled():
        sys.stderr.write(f"\n{line}\n")


def pytest_configure(config: pytest.Config) -> None:
    """Keep the config, to reach the terminal past the output capture (see `_say`).

    With parallel test processes (`-n`, pytest-xdist), the main process makes sure of
    PostgreSQL before it starts them, and hands them its URL: one throwaway server for the run,
    not one per process.
    """
    _config.append(config)
    if hasattr(config, "workerinput"):
        return  # a test process of the main one below: it inherits the environment set there
    _own_temp_folder()
    _decide_file_order(config)
    if getattr(config.option, "numprocesses", None):
        os.environ["ERRKB_TEST_POSTGRES_URL"] = pg_admin_url()


def _decide_file_order(config: pytest.Config) -> None:
    """What orders the test files (see `file_order`), read once by the main process and handed
    to its test processes, which must all collect the same order. A run of the whole suite (no
    paths, no -k or -m) keeps its files' times for the next."""
    from kbcache import CACHE, sglang_kb_target

    seconds = file_order.load(CACHE)
    os.environ[_ORDER_ENV] = json.dumps([seconds, sglang_kb_target().exists()])
    whole = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if whole and not config.option.keyword and not config.option.markexpr:
        _timer.append(file_order.Timer())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest test files first (`file_order`), as the main process decided."""
    seconds, kb_ready = json.loads(os.environ.get(_ORDER_ENV) or "[{}, true]")
    items[:] = file_order.ordered(items, seconds, kb_ready)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each file's time, counted in the main process for the next run's order."""
    for timer in _timer:
        timer.add(report)


def _own_temp_folder() -> None:
    """Point every temporary file of the run (this process's, its test processes' and every
    process they start: `TMPDIR`) into one folder, removed when the run ends. Servers under test
    share their rendered pages through folders in the temporary folder; without this, each run
    left dozens behind in /tmp. pytest's own `tmp_path` folders stay where they were (the last
    three runs kept, to read after a failure)."""
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix="errkb-tests-"))
    folder.chmod(0o755)  # as /tmp is to them: a throwaway PostgreSQL runs as another user
    # Removed at exit, after multiprocessing has removed its own folders in it: its exit handler,
    # registered when a test first imports it, runs before this one (atexit runs in reverse).
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again
    # What errkb keeps in its cache folder when a test does not name one (the match index of
    # each database a test serves, the origin store of an ingest) goes there too, not into the
    # user's ~/.cache/errkb; the shared knowledge bases keep their own folder (`kbcache.CACHE`).
    os.environ.setdefault("ERRKB_CACHE_DIR", str(folder / "errkb-cache"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Make sure of PostgreSQL before any test runs, when a selected test needs it."""
    if any(_needs_postgres(item) for item in session.items):
        pg_admin_url()


def _needs_postgres(item: pytest.Item) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    return bool(names & {"pg_url", "sglang_kb_pg_url"}) or "postgres" in params.values()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop and remove the run's own PostgreSQL server, if it started one; keep the files'
    times (main process only)."""
    while _throwaway:
        _throwaway.pop().stop()
    if _timer:
        from kbcache import CACHE

        _timer.pop().save(CACHE)


def _pg_admin() -> Engine:
    engine = make_engine(pg_admin_url())
    return engine.execution_options(isolation_level="AUTOCOMMIT")  # type: ignore[return-value]


def fresh_pg_url() -> str:
    """Create an empty PostgreSQL database for this test run and return its URL."""
    name = f"errkb_test_{uuid.uuid4().hex[:12]}"
    admin = _pg_admin()
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    base = pg_admin_url().rsplit("/", 1)[0]
    return f"{base}/{name}"


def drop_pg(url: str) -> None:
    """Drop a database made by fresh_pg_url."""
    name = url.rsplit("/", 1)[1]
    admin = _pg_admin()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """One migrated PostgreSQL database for the whole run; tables are emptied per test."""
    url = fresh_pg_url()
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    yield url
    drop_pg(url)


def empty_tables(engine: Engine) -> None:
    """Every table emptied and every sequence restarted, as `TRUNCATE ... RESTART IDENTITY`
    would leave them. TRUNCATE gives each table new files: 0.27 s a test on this machine,
    against a few milliseconds to delete the few rows a test writes."""
    with engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):  # children before their parents
            conn.execute(table.delete())
        sequences = conn.execute(
            text("SELECT oid::regclass::text FROM pg_class WHERE relkind = 'S'")
        )
        for name in sequences.scalars().all():
            conn.execute(text(f"ALTER SEQUENCE {name} RESTART"))


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite file migrated to head once per run: each test gets a copy, which is what
    migrating its own would give (a migration costs about 0.25 s; hundreds of tests take one)."""
    path = tmp_path_factory.mktemp("migrated") / "errkb.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    with engine.connect() as conn:
        conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))  # every page in the one file
    engine.dispose()
    return path


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database URL on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "errkb.sqlite3"
        shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
        yield f"sqlite:///{path}"
    else:
        url = request.getfixturevalue("pg_url")
        engine = make_engine(url)
        empty_tables(engine)
        engine.dispose()
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on a migrated, empty database (SQLite and PostgreSQL)."""
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def sglang_kb_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """SQLite with sglang's pinned releases ingested by the real pipeline (a private copy)."""
    from kbcache import copy_kb

    return copy_kb(tmp_path_factory.mktemp("kb") / "sglang.sqlite3")


@pytest.fixture(scope="session")
def sglang_kb_extended_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same knowledge base with two older releases too (`kbcache.EXTENDED_RELEASES`: 0.5.10
    and 0.5.17), for the modules that need a raise only they hold (a private copy)."""
    from kbcache import copy_kb

    return copy_kb(tmp_path_factory.mktemp("kb") / "sglang-extended.sqlite3", extended=True)


@pytest.fixture(scope="session")
def sglang_kb_docs_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same knowledge base with every entry doc stored (no public URL), as after
    `errkb ingest`; cached until the ingest or the knowledge code changes (a private copy)."""
    from kbcache import copy_kb

    return copy_kb(tmp_path_factory.mktemp("kb") / "sglang-docs.sqlite3", docs=True)


@pytest.fixture(scope="session")
def sglang_kb_pg_url() -> str:
    """The same knowledge base on PostgreSQL, built once and kept on the test server between
    runs (see `kbcache.sglang_kb_pg_url`); tests only read it."""
    from kbcache import sglang_kb_pg_url as cached

    return cached(pg_admin_url())


@pytest.fixture(params=["sqlite", "postgres"])
def own_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of its own (the test migrates it down and up)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'own.sqlite3'}"
    else:
        url = fresh_pg_url()
        yield url
        drop_pg(url)


@pytest.fixture
def forget_dictionaries(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make this process forget the trained dictionaries it has loaded, as a new
    process would start (restored after the test)."""
    from errkb.core import packed

    def forget() -> None:
        monkeypatch.setattr(packed, "_dictionaries", {})
        monkeypatch.setattr(packed, "_local", packed.threading.local())

    return forget
