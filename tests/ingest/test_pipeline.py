"""The pipeline on real databases: hostile files are counted not fatal, the cache is shared across
sources and paths, a snapshot is all or nothing, and ingesting twice changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dbdump import dump
from gitrepo import commit, new_repo
from sqlalchemy import Engine, func, select

from errkb.core.models import (
    Error,
    FileCache,
    Flag,
    Meta,
    Occurrence,
    SiteBody,
    Snapshot,
    unpacked_code,
)
from errkb.ingest import store
from errkb.ingest.pins import RepoPin
from errkb.ingest.pipeline import Job, ingest_snapshot
from errkb.ingest.sources.base import blob_sha
from errkb.ingest.sources.folder import FolderSource
from errkb.ingest.sources.git import GitSource

PIN = RepoPin(name="tests/hostile")
GOOD = (
    'def f(mode):\n    if mode not in ("a", "b"):\n        raise ValueError(f"bad mode {mode!r}")\n'
)


def hostile_tree(root: Path) -> Path:
    """A folder with one file of each kind of trouble, plus good files."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "good.py").write_text(GOOD)
    (root / "pkg" / "copy_of_good.py").write_text(GOOD)  # same blob, other path
    (root / "pkg" / "quiet.py").write_text("x = 1\n")
    (root / "pkg" / "syntax.py").write_text("raise ValueError('x'\n")
    (root / "pkg" / "latin1.py").write_bytes(b"# \xe9\xff\nraise ValueError('caf\xe9')\n")
    (root / "pkg" / "nul.py").write_bytes(b"raise ValueError('a')\x00\n")
    deep = "x = 1" + " + 1" * 100_000 + "\nraise ValueError('deep')\n"  # RecursionError
    (root / "pkg" / "deep.py").write_text(deep)
    (root / "pkg" / "huge.py").write_text("raise ValueError('huge')\n" + "#" * 600_000)
    (root.parent / "outside.py").write_text("raise ValueError('outside')\n")
    os.symlink(root.parent / "outside.py", root / "pkg" / "escape.py")
    return root


def _ingest(engine: Engine, root: Path, label: str = "v1", workers: int = 1, **job_args):
    source = FolderSource(root, label, max_bytes=500_000)
    job = Job(engine=engine, workers=workers, **job_args)
    return ingest_snapshot(source, PIN, PIN.extract_config(500_000), job)


def test_hostile_files_are_skipped_and_counted(engine: Engine, tmp_path: Path) -> None:
    summary = _ingest(engine, hostile_tree(tmp_path / "proj"))
    assert summary.status == "ingested" and summary.files == 9
    assert summary.skipped == {
        "not_utf8": 1,
        "null_bytes": 1,
        "syntax_error": 1,
        "too_deep": 1,
        "too_large": 1,
        "unsafe": 1,
    }
    assert summary.prefiltered == 1  # quiet.py never mentions ValueError
    assert summary.sites == 2 and summary.errors == 1
    with engine.connect() as conn:
        paths = sorted(conn.execute(select(Occurrence.path)).scalars())
        stored = conn.execute(select(Snapshot.skipped, Snapshot.files)).one()
    # The two copies share one cached result, yet each occurrence keeps its own path.
    assert paths == ["pkg/copy_of_good.py", "pkg/good.py"]
    assert stored == (summary.skipped, 9)


def test_cache_is_shared_across_sources(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "m.py").write_text(GOOD)
    folder = _ingest(engine, root, label="folder")
    assert (folder.files_parsed, folder.cache_hits) == (1, 0)
    repo = new_repo(tmp_path / "git")
    commit(repo, "same content, other path", {"elsewhere/m.py": GOOD}, day=0)
    repo.close()
    with GitSource(str(tmp_path / "git"), "main", cache_dir=tmp_path / "c") as source:
        summary = ingest_snapshot(source, PIN, PIN.extract_config(500_000), Job(engine=engine))
    assert (summary.files_parsed, summary.cache_hits, summary.sites) == (0, 1, 1)
    with engine.connect() as conn:
        (extractor,) = conn.execute(select(FileCache.extractor).distinct()).scalars().all()
        rows = conn.execute(select(func.count()).select_from(FileCache)).scalar_one()
    # One result for both; the git blob is also recorded by its SHA, so that later commits need
    # not read it.
    sha = blob_sha(GOOD.encode())
    found = store.load_cache(engine, extractor, [sha, f"stored:{sha}", "other"])
    assert rows == 2 and sorted(found) == [sha, f"stored:{sha}"]
    with engine.connect() as conn:
        assert sorted(conn.execute(select(Occurrence.path)).scalars()) == [
            "elsewhere/m.py",
            "lib/m.py",
        ]


def test_ingesting_twice_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    root = hostile_tree(tmp_path / "proj")
    _ingest(engine, root)
    before = dump(engine)
    with engine.connect() as conn:
        generation = conn.execute(select(Meta.value).where(Meta.key == "generation")).scalar()
    again = _ingest(engine, root, label="another label, same content")
    assert again.status == "already ingested" and again.files == 0
    assert dump(engine) == before
    with engine.connect() as conn:
        assert (
            conn.execute(select(Meta.value).where(Meta.key == "generation")).scalar() == generation
        )


class Interrupted(Exception):
    pass


def test_a_failed_snapshot_leaves_nothing_but_cache(engine: Engine, tmp_path: Path) -> None:
    first = tmp_path / "first"
    (first / "pkg").mkdir(parents=True)
    (first / "pkg" / "one.py").write_text("raise ValueError('one')\n")
    _ingest(engine, first, label="first")
    before = dump(engine)

    def crash() -> None:
        raise Interrupted

    root = hostile_tree(tmp_path / "proj")
    with pytest.raises(Interrupted):
        _ingest(engine, root, label="second", before_commit=crash)
    after = dump(engine)
    assert after["file_cache"] != before["file_cache"]  # parse results are kept...
    assert {k: v for k, v in after.items() if k != "file_cache"} == {
        k: v for k, v in before.items() if k != "file_cache"
    }  # ...but no part of the snapshot is
    summary = _ingest(engine, root, label="second")
    assert summary.status == "ingested" and summary.files_parsed == 0
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Snapshot)).scalar() == 2
        assert conn.execute(select(func.count()).select_from(Error)).scalar() == 2


def test_parallel_and_inline_parsing_agree(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(40):
        (root / f"m{i // 10}").mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"def f{j}(x):\n    if x == {j}:\n        raise ValueError(f'case {i}-{j}: {{x}}')\n"
            for j in range(20)
        )
        # Padding: enough bytes in all that the pool is started.
        (root / f"m{i // 10}" / f"f{i}.py").write_text(body + "#" * 8000)
    summary = _ingest(engine, root, workers=2)
    assert summary.files_parsed == 40 and summary.sites == 800 and summary.errors == 800
    parallel, parallel_cache = _without_cache(dump(engine)), _cache_contents(engine)
    with engine.begin() as conn:
        for table in (
            "occurrences",
            "error_flags",
            "snapshot_flags",
            "errors",
            "snapshots",
            "file_cache",
            "meta",
        ):
            conn.exec_driver_sql(f"DELETE FROM {table}")
    inline = _ingest(engine, root, workers=1)
    assert inline.files_parsed == 40
    assert _without_cache(dump(engine)) == parallel
    assert _cache_contents(engine) == parallel_cache


def _without_cache(tables: dict[str, list[str]]) -> dict[str, list[str]]:
    """A dump without the parse cache and its dictionaries: how a row is packed depends on
    when the dictionary was trained (compared unpacked by `_cache_contents`)."""
    return {t: rows for t, rows in tables.items() if t not in ("file_cache", "pack_dictionaries")}


def _cache_contents(engine: Engine) -> dict[tuple[int, int, str], bytes]:
    """The parse cache's rows, results unpacked (markers and stored digests as they are)."""
    from errkb.core.packed import ZSTD_MAGIC, is_preset, unpack
    from errkb.ingest.cache_packing import PURPOSE

    store.load_dictionaries(engine, PURPOSE)
    with engine.connect() as conn:
        rows = conn.execute(
            select(FileCache.id, FileCache.key_check, FileCache.extractor, FileCache.result)
        )
        blobs = {(i, k, x): bytes(r) for i, k, x, r in rows}
    return {
        key: unpack(b) if is_preset(b) or b[:4] == ZSTD_MAGIC else b for key, b in blobs.items()
    }


def test_path_glob_flag_classes_keep_separate_cache_entries(engine: Engine, tmp_path: Path) -> None:
    # The same bytes define flags under a matching path glob and nothing elsewhere; one cached
    # result for both would give the other path flags it does not define (or lose them).
    fields = (
        "class CacheFields:\n    cache_size: int = 8\n\n"
        "def check(n):\n    if n < 0:\n        raise ValueError('negative size')\n"
    )
    pin = RepoPin(name="tests/globs", flag_classes=["*/fields/*.py:*"])
    root = tmp_path / "proj"
    for folder in ("fields", "other"):
        (root / "pkg" / folder).mkdir(parents=True)
        (root / "pkg" / folder / "cache.py").write_text(fields)
    job = Job(engine=engine, workers=1)
    summary = ingest_snapshot(
        FolderSource(root, "v1", max_bytes=500_000), pin, pin.extract_config(500_000), job
    )
    assert summary.files_parsed == 2 and summary.cache_hits == 0
    with engine.connect() as conn:
        flag_paths = sorted(conn.execute(select(Flag.path, Flag.name)).all())
    assert flag_paths == [("pkg/fields/cache.py", "--cache-size")]


def project(root: Path, version: int) -> Path:
    """A package of 40 modules big enough to be extracted by function units; version 2 edits
    some functions, a module constant and a class constant, and moves one module."""
    for i in range(40):
        limit = 4 if version == 1 or i % 3 else 5
        kind = "tp" if version == 1 or i % 5 else "dp"
        body = [f'"""Module {i}."""', "import os", f'LIMIT = "at most {limit}"', ""]
        for j in range(12):
            edited = version == 2 and (i + j) % 7 == 0
            body += [
                f"def check_{j}(n, mode):",
                f"    if n > {j + (1 if edited else 0)}:",
                f'        raise ValueError(f"n={{n}} is over {j}: " + LIMIT)',
                "    for step in range(n):",
                "        if step == mode:",
                "            return step",
                "    return None",
                "",
            ]
        step = 2 if version == 2 and i % 4 == 0 else 1  # a function without sites, edited
        body += [
            "def total(values):",
            "    out = 0",
            f"    for value in values[::{step}]:",
            "        out += value",
            "    if out < 0:",
            "        return 0",
            "    return out",
            "",
        ]
        body += ["class Engine:", f'    KIND = "{kind}"', ""]
        for j in range(8):
            body += [
                f"    def validate_{j}(self, size):",
                '        """Doc."""',
                "        if size < 0 and self.mode:",
                f'            raise ValueError(self.KIND + " size {j} must be >= 0")',
                "        total = 0",
                "        for part in range(size):",
                "            total += part",
                "        return total",
                "",
            ]
        name = f"mod_{i}.py" if not (version == 2 and i == 7) else "moved/mod_7.py"
        (root / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / name).write_text("\n".join(body) + "\n")
    (root / "pkg" / "plain.py").write_text("x = 1\n")
    return root


def test_streaming_while_reading_stores_what_a_plain_run_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cache lookups and worker jobs started while files are read (forced on for this small
    project, on two processes) give the same database as one plain in-process run."""
    import errkb.ingest.file_results as file_results
    from errkb.core.db import make_engine, upgrade
    from errkb.ingest.workers import Workers

    submitted: list[str] = []
    real_submit = Workers.submit

    def submit(self, fn, *args):  # type: ignore[no-untyped-def]
        submitted.append(fn.__name__)
        return real_submit(self, fn, *args)

    monkeypatch.setattr(Workers, "submit", submit)
    roots = [project(tmp_path / f"v{v}", v) for v in (1, 2)]
    assert sum(p.stat().st_size for p in roots[0].rglob("*.py")) > 40 * 4_000
    dumps = []
    for mode, (stream_bytes, workers) in {"plain": (10**12, 1), "streamed": (1, 2)}.items():
        monkeypatch.setattr(file_results, "STREAM_BYTES", stream_bytes)
        monkeypatch.setattr(file_results, "LOOKUP_FILES", 5)
        engine = make_engine(f"sqlite:///{tmp_path}/{mode}.sqlite3")  # same dialect: same dump
        upgrade(engine)
        summaries = [_ingest(engine, root, f"v{v}", workers) for v, root in enumerate(roots, 1)]
        assert [s.sites for s in summaries] == [800, 800]
        assert summaries[1].files_parsed == 40  # every module changed (or moved)
        dumps.append(dump(engine))
        engine.dispose()
    assert dumps[0] == dumps[1]
    # The streamed run really worked while reading: v1 extracted, v2 split (units cached).
    assert submitted.count("extract_chunk") >= 5 and submitted.count("split_chunk") >= 5


@pytest.mark.parametrize("trained", [False, True], ids=["preset", "trained-dictionary"])
def test_changed_modules_reuse_unit_rows_on_both_databases(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trained: bool
) -> None:
    """Function-unit rows are stored and reused through the real file cache (SQLite and
    PostgreSQL), packed as the workers packed them or repacked with a trained dictionary, and
    the stored occurrences equal a whole-file extraction of each module."""
    import errkb.ingest.extract.incremental as incremental
    from errkb.core import packed
    from errkb.core.records import error_id
    from errkb.ingest import cache_packing
    from errkb.ingest.extract import extract_file

    if trained:  # a dictionary from the first rows on (a real project has thousands)
        monkeypatch.setattr(cache_packing, "TRAIN_ON", 10)
        monkeypatch.setattr(packed, "MIN_SAMPLES", 8)

    roots = [project(tmp_path / f"v{v}", v) for v in (1, 2)]
    keys: list[str] = []
    real_write = store.write_cache

    def write(engine: Engine, extractor: str, blobs: dict[str, bytes]) -> None:
        keys.extend(blobs)
        real_write(engine, extractor, blobs)

    monkeypatch.setattr(store, "write_cache", write)
    _ingest(engine, roots[0], "v1")
    assert (store.load_dictionaries(engine, cache_packing.PURPOSE) is not None) == trained
    # 20 distinct functions with sites (the modules share their text) and some without
    assert sum(k.startswith("u:") for k in keys) == 20 and any(k.startswith("n:") for k in keys)

    decoded: list[int] = []
    real_decode = incremental.decode_unit

    def decode(blob: bytes):  # type: ignore[no-untyped-def]
        decoded.append(1)
        return real_decode(blob)

    monkeypatch.setattr(incremental, "decode_unit", decode)
    summary = _ingest(engine, roots[1], "v2")
    assert summary.files_parsed == 40 and len(decoded) >= 40 * 10  # most functions reused

    config = PIN.extract_config(500_000)
    expected = set()
    for path in sorted((roots[1] / "pkg").rglob("*.py")):
        rel = path.relative_to(roots[1]).as_posix()
        for s in extract_file(path.read_bytes(), rel, config).sites:
            eid = error_id(PIN.name, s.exception, s.template)
            expected.add(
                (eid, rel, s.line, s.end_line, s.qualname, s.snippet.start, s.snippet.lines)
            )
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                Occurrence.error_id,
                Occurrence.path,
                Occurrence.line,
                Occurrence.end_line,
                Occurrence.qualname,
                SiteBody.code,
            )
            .join(Snapshot, Snapshot.id == Occurrence.snapshot_id)
            .join(SiteBody, SiteBody.hash == Occurrence.body_hash)
            .where(Snapshot.label == "v2")
        ).all()
    # Bodies keep their lines relative to the raise line (shared while the code above moves).
    snippets = [
        (e, p, ln, end, q, unpacked_code(code)["snippet"]) for e, p, ln, end, q, code in rows
    ]
    stored = {
        (e, p, ln, end, q, ln + sn["start"], tuple(sn["lines"]))
        for e, p, ln, end, q, sn in snippets
    }
    assert stored == expected
