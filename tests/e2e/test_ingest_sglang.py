"""Issue 2's acceptance on real sglang releases, through the real pipeline into the database.

The knowledge base (`sglang_kb_url`) is built by ingesting the pinned releases; 0.5.23 is also
ingested through `errkb ingest --pypi` into a fresh database and counted against an independent
`ast.walk` of the wheel.
"""

from __future__ import annotations

import ast
import asyncio
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from dbdump import dump
from kbcache import CACHE, built_once, copy_file_cache, extraction_digest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from errkb.core.db import make_engine, upgrade
from errkb.core.models import Error, Occurrence, Snapshot
from errkb.core.settings import Settings
from errkb.ingest.sources.pypi import cached_archive
from errkb.service.app import create_app
from errkb.service.cli.main import app

pytestmark = pytest.mark.sglang

PATH = "python/sglang/srt/mem_cache/kv_cache_configurator.py"
MESSAGE = (
    "--enable-unified-memory with PD disaggregation does not support hybrid-SWA models yet "
    "(no whole-envelope transfer scheme for the SWA sub-pool). Drop --enable-unified-memory "
    "or run without PD."
)


@pytest.fixture(scope="module")
def kb(sglang_kb_url: str) -> Iterator[Engine]:
    engine = make_engine(sglang_kb_url)
    yield engine
    engine.dispose()


def independent_count(wheel: Path) -> int:
    """`raise ValueError` / `raise ValueError(...)` nodes in every parsable .py of the wheel."""
    count = 0
    with zipfile.ZipFile(wheel) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scanned code's invalid escapes are not our warnings
        for name in zf.namelist():
            if not name.endswith(".py"):
                continue
            try:
                tree = ast.parse(zf.read(name))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                    count += isinstance(exc, ast.Name) and exc.id == "ValueError"
    return count


def test_cli_ingest_of_0_5_23_finds_every_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    engine = make_engine(url)
    upgrade(engine)
    # Parse results of the same extraction code for this config, kept from an earlier run: the
    # CLI reuses them (tests/e2e/test_sglang_extract.py extracts the release afresh each run).
    kept = CACHE / f"{VALUEERROR_FILES}-x{extraction_digest()}.sqlite3"
    if kept.exists():
        copy_file_cache(f"sqlite:///{kept}", url)
    monkeypatch.setenv("ERRKB_DATABASE_URL", url)
    monkeypatch.setenv("ERRKB_CACHE_DIR", str(CACHE))
    monkeypatch.setenv("ERRKB_MATERIALIZE_ENTRIES", "false")  # sites are the point here
    # ValueError alone, as the knowledge base was before every class (tests/e2e/
    # test_coverage_sglang.py counts the others): `--classes` must give exactly its sites.
    args = ["ingest", "--pypi", "sglang==0.5.23", "--classes", "ValueError"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    built_once(kept, VALUEERROR_FILES, 1, lambda partial: _keep_file_cache(url, partial))

    wheel = cached_archive("sglang", "0.5.23", CACHE / "pypi")
    assert wheel is not None
    expected = independent_count(wheel)
    with engine.connect() as conn:
        sites = conn.execute(select(func.count()).select_from(Occurrence)).scalar()
        snapshot = conn.execute(select(Snapshot.label, Snapshot.sites, Snapshot.files)).one()
        templates = conn.execute(
            select(Error.template, func.count())
            .join(Occurrence, Occurrence.error_id == Error.id)
            .group_by(Error.id, Error.template)
        ).all()
    engine.dispose()
    assert sites == expected and snapshot == ("0.5.23", expected, snapshot.files)
    opaque = sum(n for segs, n in templates if _opaque(segs))
    assert opaque / sites <= 0.005


VALUEERROR_FILES = "files-valueerror"  # the kept parse results of `--classes ValueError`


def _keep_file_cache(url: str, dest: Path) -> None:
    """A database holding only `url`'s file cache (its parse results), to seed a later run."""
    engine = make_engine(f"sqlite:///{dest}")
    upgrade(engine)
    engine.dispose()
    copy_file_cache(url, f"sqlite:///{dest}")


def _opaque(segments: list[dict]) -> bool:
    literal = "".join(s["text"] for s in segments if s["kind"] == "text")
    return not literal.strip() and any(s["kind"] == "placeholder" for s in segments)


def _occurrences(kb: Engine, label: str, path: str = PATH) -> list[SimpleNamespace]:
    """The snapshot's occurrences in `path`, bodies read back at their lines (ORM properties)."""
    with Session(kb) as session:
        rows = session.execute(
            select(Occurrence, Error.message, Snapshot.link_base)
            .join(Error, Error.id == Occurrence.error_id)
            .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            .where(Snapshot.label == label, Occurrence.path == path)
            .order_by(Occurrence.line)
        ).all()
        return [
            SimpleNamespace(
                error_id=o.error_id,
                path=o.path,
                line=o.line,
                end_line=o.end_line,
                qualname=o.qualname,
                conditions=o.conditions,
                snippet=o.snippet,
                flags=o.flags,
                raise_source=o.raise_source,
                message=message,
                link_base=link_base,
            )
            for o, message, link_base in rows
        ]


def test_reference_error_in_0_5_18(kb: Engine) -> None:
    (occ,) = [o for o in _occurrences(kb, "0.5.18") if o.message == MESSAGE]
    assert (occ.line, occ.qualname) == (406, "KVCacheConfigurator._init_pools")
    assert occ.link_base + occ.path + f"#L{occ.line}" == (
        "https://github.com/sgl-project/sglang/blob/v0.5.18/"
        "python/sglang/srt/mem_cache/kv_cache_configurator.py#L406"
    )
    texts = [c["expr"] if c["holds"] else f"not ({c['expr']})" for c in occ.conditions]
    assert "get_memory().enable_unified_memory and req_to_token_pool is None" in texts
    assert "not (self.mambaish_config is not None)" in texts
    assert any(t.startswith("self.is_hybrid_swa and") and "not is_deepseek_v4(" in t for t in texts)
    resolved = {name: expr for c in occ.conditions for name, expr in c["resolved"]}
    assert resolved["pd_enabled"] == "get_disagg().disaggregation_mode != 'null'"
    assert occ.snippet["start"] < 406 <= occ.snippet["raise_start"] + len(occ.snippet["lines"])


def test_reference_error_across_releases(kb: Engine) -> None:
    (ref,) = [o for o in _occurrences(kb, "0.5.18") if o.message == MESSAGE]
    in_0519 = {o.line: o for o in _occurrences(kb, "0.5.19")}
    assert in_0519[451].error_id == ref.error_id and in_0519[451].message == MESSAGE
    variant = in_0519[422]
    assert variant.error_id != ref.error_id and len(variant.message) > len(MESSAGE)
    with kb.connect() as conn:
        labels = conn.execute(
            select(Snapshot.label)
            .join(Occurrence, Occurrence.snapshot_id == Snapshot.id)
            .where(Occurrence.error_id == ref.error_id)
            .distinct()
        ).scalars()
        assert sorted(labels) == ["0.5.18", "0.5.19"]  # gone from 0.5.20 on
        assert conn.execute(select(Snapshot.label).where(Snapshot.label == "0.5.20")).scalar()


async def _get(url: str, data_dir: Path, *requests: tuple[str, dict[str, str]]) -> list:
    app = create_app(Settings(database_url=url, data_dir=data_dir))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return [await client.get(path, params=params) for path, params in requests]


def test_snapshots_endpoint_lists_releases_in_version_order(
    sglang_kb_url: str, tmp_path: Path
) -> None:
    response, other = asyncio.run(
        _get(sglang_kb_url, tmp_path, ("/api/snapshots", {}), ("/api/snapshots", {"repo": "x"}))
    )
    assert response.status_code == 200
    rows = response.json()
    assert [r["label"] for r in rows] == ["0.5.18", "0.5.19", "0.5.20", "0.5.23"]
    assert all(r["repo"] == "sgl-project/sglang" and r["kind"] == "pypi" for r in rows)
    assert rows[0]["link_base"] == "https://github.com/sgl-project/sglang/blob/v0.5.18/"
    assert all(r["sites"] > 4000 and r["errors"] > 0 for r in rows)
    assert other.status_code == 200 and other.json() == []


def test_postgres_knowledge_base_matches_sqlite(sglang_kb_url: str, sglang_kb_pg_url: str) -> None:
    sqlite_engine, pg_engine = make_engine(sglang_kb_url), make_engine(sglang_kb_pg_url)
    try:
        on_sqlite, on_pg = dump(sqlite_engine), dump(pg_engine)
    finally:
        sqlite_engine.dispose()
        pg_engine.dispose()
    for table in (
        "errors",
        "occurrences",
        "site_bodies",
        "snapshot_flags",
        "flag_bodies",
        "file_cache",
    ):
        assert on_pg[table] == on_sqlite[table], table
