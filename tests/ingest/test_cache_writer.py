"""The background file-cache writer on real databases: every queued row lands by `close`, and a
failed write is raised there, not lost in the thread."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, func, select

from errkb.core.models import FileCache
from errkb.ingest import store
from errkb.ingest.cache_writer import CacheWriter


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(FileCache)).scalar_one())


def _rows(engine: Engine, keys: list[str]) -> dict[str, bytes]:
    return store.load_cache(engine, "x:1", keys)


def test_queued_rows_are_all_written_by_close(engine: Engine) -> None:
    writer = CacheWriter(engine, "x:1")
    writer.put({f"h{i}": b"r%d" % i for i in range(700)})  # more than one statement batch
    writer.put({})
    writer.put({"h0": b"other", "last": b"r"})  # an existing key keeps its row
    writer.close()
    rows = _rows(engine, [f"h{i}" for i in range(700)] + ["last"])
    assert _count(engine) == len(rows) == 701 and rows["h0"] == b"r0" and rows["last"] == b"r"
    writer.put({"again": b"r"})  # usable after close: a new thread
    writer.close()
    assert "again" in _rows(engine, ["again"])


def test_a_failed_write_is_raised_by_close(engine: Engine) -> None:
    writer = CacheWriter(engine, "x:1")
    writer.put({"ok": b"r"})
    writer.put({"bad": None})  # type: ignore[dict-item]  # NOT NULL: the database refuses it
    writer.put({"after": b"r"})
    with pytest.raises(Exception):  # noqa: B017 - the driver's own error class
        writer.close()
    rows = _rows(engine, ["ok", "bad", "after"])
    assert rows == {"ok": b"r"}  # and nothing queued after the failure was written
    writer.close()  # the error was raised once


def test_lookups_find_rows_by_key_and_never_a_colliding_key(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_cache(engine, "x:1", {"a": b"ra", "b": b"rb"})
    assert store.load_cache(engine, "x:1", ["a", "b", "c"]) == {"a": b"ra", "b": b"rb"}
    assert store.load_cache(engine, "x:2", ["a"]) == {}  # another extractor's rows are not hits
    # Every key hashed to one id: the first row keeps it, the others are simply not cached.
    real = store.file_cache_key
    monkeypatch.setattr(store, "file_cache_key", lambda x, key: (7, real(x, key)[1]))
    store.write_cache(engine, "x:1", {"first": b"r1"})
    store.write_cache(engine, "x:1", {"second": b"r2"})
    assert store.load_cache(engine, "x:1", ["first"]) == {"first": b"r1"}
    assert store.load_cache(engine, "x:1", ["second"]) == {}


def _result(i: int, j: int) -> bytes:
    """A parse result of realistic shape and size (a few hundred bytes of JSON)."""
    site = (
        '{"path":"pkg/mod%d.py","line":%d,"qualname":"Config.check_%d","exception":"ValueError",'
        '"template":{"segments":[{"kind":"text","text":"tp_size %d must divide the heads"}]},'
        '"conditions":[{"kind":"if","expr":"self.tp_size %% %d != 0","holds":true}]}'
    )
    sites = ",".join(site % (i, j, k, j, k) for k in range(3))
    return f'{{"status":"parsed","sites":[{sites}]}}'.encode()


@pytest.fixture
def small_training(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dictionaries trained on tens of results, not hundreds (the tests write a few dozen)."""
    from errkb.core import packed
    from errkb.ingest import cache_packing

    monkeypatch.setattr(cache_packing, "TRAIN_ON", 60)
    monkeypatch.setattr(packed, "MIN_SAMPLES", 8)


@pytest.mark.usefixtures("small_training")
def test_results_are_repacked_with_a_dictionary_trained_on_the_first_ones(
    engine: Engine, forget_dictionaries: Callable[[], None]
) -> None:
    from errkb.core import packed
    from errkb.ingest import cache_packing

    results = {f"h{i}": _result(i, i) for i in range(100)}
    writer = CacheWriter(engine, "x:1", cache_packing.CachePacker(None))
    first = {k: packed.pack(results[k]) for k in list(results)[:40]}
    writer.put({**first, "stored:abc": b"0123abcd", "n:1": b""})  # not results: kept as given
    writer.put({k: packed.pack(v) for k, v in list(results.items())[40:]})
    writer.close()
    trained_id = writer.packer.dict_id
    assert trained_id != 0

    # A new process: the dictionary is loaded from the database, not known beforehand.
    forget_dictionaries()
    assert store.load_dictionaries(engine, cache_packing.PURPOSE) is not None
    rows = _rows(engine, [*results, "stored:abc", "n:1"])
    assert {k: packed.unpack(rows[k]) for k in results} == results
    assert rows["stored:abc"] == b"0123abcd" and rows["n:1"] == b""
    assert all(packed.is_preset(rows[k]) for k in first)  # written before the training
    later = [rows[k] for k in list(results)[40:]]
    assert {packed.dictionary_of(b) for b in later} == {trained_id}


@pytest.mark.usefixtures("small_training")
def test_results_stored_by_earlier_snapshots_count_toward_the_training(engine: Engine) -> None:
    from errkb.core import packed
    from errkb.ingest import cache_packing
    from errkb.ingest.cache_lookup import _packer

    earlier = {f"a{i}": packed.pack(_result(i, i)) for i in range(40)}
    store.write_cache(engine, "x:1", earlier)  # a first snapshot: too few to train on
    writer = CacheWriter(engine, "x:1", _packer(engine, "x:1"))
    writer.put({f"b{i}": packed.pack(_result(i, -i)) for i in range(30)})  # 70 with those
    writer.close()
    assert writer.packer.dict_id != 0
    assert store.load_dictionaries(engine, cache_packing.PURPOSE) is not None
    assert packed.dictionary_of(_rows(engine, ["b0"])["b0"]) == writer.packer.dict_id


@pytest.mark.usefixtures("small_training")
def test_a_dictionary_that_packs_no_better_than_the_preset_is_not_kept() -> None:
    import random

    from errkb.core import packed
    from errkb.ingest.cache_packing import _worthwhile

    rng = random.Random(7)
    results = [_result(i, i) for i in range(80)]
    noise = [rng.randbytes(600).hex().encode() for _ in range(80)]
    assert _worthwhile(packed.train(results), results) is not None
    assert _worthwhile(packed.train(noise), results) is None  # learnt from other material
    assert _worthwhile(None, results) is None


@pytest.mark.usefixtures("small_training")
def test_a_row_whose_dictionary_is_unknown_is_loaded_or_else_missed(
    engine: Engine, forget_dictionaries: Callable[[], None]
) -> None:
    from errkb.core import packed
    from errkb.core.models import PackDictionary
    from errkb.ingest import cache_packing

    results = {f"h{i}": _result(i, i) for i in range(80)}
    writer = CacheWriter(engine, "x:1", cache_packing.CachePacker(None))
    writer.put({k: packed.pack(v) for k, v in results.items()})
    writer.put({"stored:x": b"0123abcd"})  # not a packed result: written as it is
    writer.close()
    assert writer.packer.dict_id != 0

    # Another process trained it: this one loads it from the database on the first lookup.
    forget_dictionaries()
    found = _rows(engine, list(results))
    assert {k: packed.unpack(b) for k, b in found.items()} == results

    # A cache copied without its dictionary: those rows are misses (parsed again), not a crash.
    forget_dictionaries()
    with engine.begin() as conn:
        conn.execute(PackDictionary.__table__.delete())  # type: ignore[attr-defined]
    assert _rows(engine, [*results, "stored:x"]) == {"stored:x": b"0123abcd"}
