"""The match index kept in the cache folder: read back whole under its key only, never from a
damaged, foreign or crafted file, never from a folder others can write, and never under the key
of another database or ingest."""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import pytest
from match_project import ingest_version
from matcher_rows import occ, row

from errkb.core.db import make_engine
from errkb.knowledge.who.evidence import in_test_code
from errkb.service.match import index_file, queries
from errkb.service.match.index_file import IndexFile
from errkb.service.match.matcher import MatchIndex, build_index, match_text

URL = "sqlite:////nowhere/kb.sqlite3"
OOM = row(
    "CUDA out of memory. Tried to allocate {size}",
    occ("python/sglang/srt/mem_cache/allocator.py", 40, "Allocator.alloc", "0.5.23"),
    exception="RuntimeError",
)
LAYOUT = row(
    "Unsupported layout {layout!r} for the paged KV cache",
    occ("python/sglang/srt/layers/attention/paged.py", 12, "paged", "0.5.22"),
    occ("python/sglang/test/test_paged.py", 30, "test_paged", "0.5.23"),
)
TEXTS = (
    "RuntimeError: CUDA out of memory. Tried to allocate 2 GiB\n",
    "ValueError: Unsupported layout 'nhd' for the paged KV cache\n",
)


def _index() -> MatchIndex:
    return build_index([OOM, LAYOUT], generation="3", test_path=in_test_code)


def _answers(index: MatchIndex) -> list[list[tuple[str, float]]]:
    return [[(m.entry.id, m.score) for m in match_text(index, t)] for t in TEXTS]


def test_an_index_is_read_back_whole_under_its_key_only(tmp_path: Path) -> None:
    kept = IndexFile(tmp_path, URL)
    assert kept.read("k1") is None  # nothing kept yet
    index = _index()
    kept.write(index, "k1")
    back = kept.read("k1")
    assert back is not None and back is not index
    assert (back.entries, back.postings, back.stats) == (index.entries, index.postings, index.stats)
    assert (back.generation, back.test_path, back.class_of) == ("3", in_test_code, index.class_of)
    assert back.entries[0].probes == index.entries[0].probes  # a field its __init__ computes
    assert _answers(back) == _answers(index) and all(_answers(index))
    assert kept.read("k2") is None  # another ingest's key
    assert IndexFile(tmp_path, "sqlite:////elsewhere/kb.sqlite3").read("k1") is None
    assert oct(kept.folder.stat().st_mode & 0o777) == oct(0o700)


@pytest.mark.parametrize("damage", ["flipped byte", "cut short", "not an index", "empty"])
def test_a_damaged_file_is_never_read(tmp_path: Path, damage: str) -> None:
    kept = IndexFile(tmp_path, URL)
    kept.write(_index(), "k1")
    data = kept.path.read_bytes()
    if damage == "flipped byte":
        data = data[:-50] + bytes([data[-50] ^ 1]) + data[-49:]
    elif damage == "cut short":
        data = data[: len(data) // 2]
    elif damage == "not an index":
        data = b"something else entirely" * 10
    else:
        data = b""
    kept.path.write_bytes(data)
    assert kept.read("k1") is None


def _forged(kept: IndexFile, key: str, payload: bytes) -> None:
    """A file with a right header and checksum around `payload`, as someone could write it."""
    checksum = hashlib.blake2b(payload, digest_size=32).digest()
    head = index_file.MAGIC + index_file.HEADER.pack(kept.key(key), checksum, len(payload))
    kept.path.write_bytes(head + payload)


class _Runs:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (os.mkdir, (str(self.marker),))


def test_a_crafted_pickle_with_a_right_checksum_runs_nothing(tmp_path: Path) -> None:
    kept = IndexFile(tmp_path, URL)
    kept.write(_index(), "k1")
    marker = tmp_path / "ran"
    _forged(kept, "k1", pickle.dumps(_Runs(marker)))
    assert kept.read("k1") is None and not marker.exists()
    _forged(kept, "k1", pickle.dumps({"not": "an index"}))
    assert kept.read("k1") is None
    kept.write(_index(), "k1")
    assert kept.read("k1") is not None  # the same folder, written by the code: read


def test_nothing_is_kept_or_read_in_a_folder_others_can_write(tmp_path: Path) -> None:
    kept = IndexFile(tmp_path, URL)
    kept.write(_index(), "k1")
    kept.folder.chmod(0o777)
    assert kept.read("k1") is None
    kept.path.unlink()
    kept.write(_index(), "k1")
    assert not kept.path.exists()


def test_only_the_files_used_last_are_kept(tmp_path: Path) -> None:
    paths = []
    for n in range(index_file.KEEP + 3):
        kept = IndexFile(tmp_path, f"sqlite:////nowhere/kb{n}.sqlite3")
        kept.write(_index(), "k1")
        os.utime(kept.path, (n, n))  # written in this order, long ago
        paths.append(kept.path)
    IndexFile(tmp_path, URL).write(_index(), "k1")
    left = sorted(p.name for p in (tmp_path / index_file.FOLDER).iterdir())
    assert len(left) == index_file.KEEP
    assert left == sorted([IndexFile(tmp_path, URL).path.name] + [p.name for p in paths[4:]])


def test_the_content_key_moves_with_every_ingest_and_every_new_database(
    db_url: str, tmp_path: Path
) -> None:
    engine = make_engine(db_url)
    try:
        ingest_version(db_url, tmp_path / "a", 1)
        first = queries.content_key_now(engine)
        index, key = queries.keyed_index(engine)
        assert key == first and index.generation == queries.generation_now(engine)
        ingest_version(db_url, tmp_path / "a", 2)
        assert queries.content_key_now(engine) not in ("", first)
    finally:
        engine.dispose()
    # The same ingest into a new database (at the same generation): another key.
    other = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    ingest_version(other, tmp_path / "b", 1)
    engine = make_engine(other)
    try:
        assert queries.generation_now(engine) == "1"
        assert queries.content_key_now(engine) != first
    finally:
        engine.dispose()
