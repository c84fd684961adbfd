"""The compressed-blob format of the parse cache and the site bodies (errkb.core.packed)."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import pytest

from errkb.core import packed
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


def _samples() -> list[bytes]:
    return [
        f'{{"id":"{i:016x}","message":"tp_size must divide {i}","path":"pkg/m{i % 7}.py"}}'.encode()
        * 4
        for i in range(200)
    ]


def test_a_trained_dictionary_packs_its_kind_smaller_and_is_needed_to_read(
    forget_dictionaries: Callable[[], None],
) -> None:
    samples = _samples()
    trained = packed.train(samples)
    assert trained is not None and trained.samples == 200
    with_dict, without = packed.Packer(trained), packed.Packer(None)
    blob = with_dict.pack(samples[3])
    assert packed.dictionary_of(blob) == trained.id != 0
    assert len(blob) < len(without.pack(samples[3])) < len(samples[3])
    assert packed.unpack(without.pack(samples[3])) == samples[3]  # no dictionary needed
    forget_dictionaries()  # a process that has not loaded it
    with pytest.raises(packed.UnknownDictionary) as missing:
        packed.unpack(blob)
    assert missing.value.dict_id == trained.id
    packed.register(trained.id, trained.data)
    assert packed.unpack(blob) == samples[3]


def test_too_few_samples_train_no_dictionary_and_a_wrong_id_is_refused() -> None:
    assert packed.train(_samples()[: packed.MIN_SAMPLES - 1]) is None
    trained = packed.train(_samples())
    assert trained is not None
    with pytest.raises(ValueError, match="does not hold that id"):
        packed.register(trained.id + 1, trained.data)
