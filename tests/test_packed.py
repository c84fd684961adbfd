"""The compressed-blob format of the parse cache and the site bodies (errkb.core.packed)."""

from __future__ import annotations

import zlib

import pytest

from errkb.core.packed import ZDICT, pack, unpack
from errkb.ingest.extract import extract_file
from errkb.ingest.filecache import decode_result, encode_result

SOURCE = b"""
def check(self, config):
    if not isinstance(config.tp_size, int):
        raise ValueError(f"tp_size must be an int, got {config.tp_size!r}")
    elif config.tp_size <= 0:
        raise ValueError("tp_size must be positive")
    return config
"""


def test_round_trip_and_older_plain_zlib_blobs() -> None:
    data = b'{"sites":[]}' * 10
    assert unpack(pack(data)) == data
    assert unpack(zlib.compress(data, 1)) == data  # cache rows written before the dictionary


def test_a_stream_with_another_dictionary_is_refused() -> None:
    other = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, b"another dict")
    blob = other.compress(b"some data some data") + other.flush()
    with pytest.raises(ValueError, match="unknown preset dictionary"):
        unpack(blob)


def test_a_cut_stream_is_an_error() -> None:
    blob = pack(bytes(range(256)) * 8)
    with pytest.raises(zlib.error):
        unpack(blob[:-10])


def test_a_file_result_is_smaller_than_plain_zlib_and_reads_back() -> None:
    from errkb.core.records import ExtractConfig

    result = extract_file(SOURCE, "pkg/check.py", ExtractConfig())
    assert len(result.sites) == 2
    blob = encode_result(result)
    assert decode_result(blob) == result
    plain = zlib.compress(unpack(blob), 6)
    assert len(blob) < len(plain)
    assert blob[1] & 0x20 and int.from_bytes(blob[2:6], "big") == zlib.adler32(ZDICT)
