"""Compressed JSON blobs: the parse cache's results, the site bodies' code and the entry docs.

Most of these blobs are small (a few kilobytes of JSON), too small for zlib to learn their field
names and the shape of Python source before they end. A preset dictionary (`ZDICT`: the records'
keys and common values, and lines of Python every raise site has) gives zlib that start: on the
all-release sglang knowledge base it stores the parse cache in a quarter less space than plain
zlib at its fastest level (26.6 against 34.8 MiB), for about twice the compression time (2.0
against 0.9 s per 36 MiB of JSON: a few seconds of CPU over a whole history's ingest, spread
over the parse workers), and reading is as fast. Level 4 would keep 95% of the saving at 1.4x.

The dictionary is part of the stored format. zlib writes its checksum (DICTID) into every stream
made with it, so `unpack` reads streams made with it, and plain zlib streams (the parse cache
written before it), and refuses any other. Never change `ZDICT`: add a new one to `_KNOWN`.

Trained dictionaries (zstd). Where many blobs of one kind are written together (an ingest's
entry docs), a dictionary trained on those very blobs does far better than a fixed one: zstd
learns the repeated field names, sentences and paths of this knowledge base. Such a blob is a
zstd frame that names its dictionary's id; the dictionary itself is stored in the database
(`errkb.core.dictionaries`), and a reader that meets an id it does not hold gets
`UnknownDictionary` and loads it. `unpack` tells the formats apart by their first bytes: a zstd
frame starts with its magic number, which is never a valid zlib header.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass

import zstandard

LEVEL = 6  # measured: level 9 saves under 1% more, for a third more time

ZDICT = (
    b'"names":["None","True","False","ValueError","TypeError","isinstance","self","config",'
    b'"args","kwargs","len","str","int","float","dict","list","tuple","type","raise","return",'
    b'"elif","else","if","not","in","is","and","or","for","def","class","import","from","with",'
    b'"assert","lambda"],{"kind":"flag","dest":"","flag":"--","via":"","path":"'
    b'"flags":[],"status":"parsed","detail":null,"cli":'
    b'{"flags":["--"],"dest":"","type":"str","default":"None","choices":null,"help":"",'
    b'"origin":"argparse"}"raise_source":"f\\"","raise_start":,"raise_end":}'
    b'"snippet":{"start":,"lines":["","        else:","            raise ValueError(",'
    b'"                f\\"","            )","        if self.","    def __init__(self, ",'
    b'"        return ","    ]"conditions":[{"kind":"if","expr":"not isinstance(",'
    b'"holds":false,"line":,"resolved":[]},{"kind":"elif","expr":"self.","holds":true,'
    b'"line":,"resolved":[["'
    b'"path":"","line":,"end_line":,"qualname":"'
    b'"form":"fstring"},"form":"literal"},'
    b'{"kind":"placeholder","text":"self.","conversion":null,"format_spec":null}'
    b'{"context":"","start":,"sites":[{"exception":"ValueError","template":{"segments":'
    b'[{"kind":"text","text":"","conversion":null,"format_spec":null},'
)
_KNOWN = {zlib.adler32(ZDICT): ZDICT}


def pack(data: bytes) -> bytes:
    """`data` compressed with the preset dictionary."""
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, ZDICT)
    return packer.compress(data) + packer.flush()


def unpack(blob: bytes) -> bytes:
    """The bytes `pack`, a `Packer` or plain `zlib.compress` was given.

    A zstd blob made with a trained dictionary needs that dictionary registered in this process
    (`register`); `UnknownDictionary` says which one is missing."""
    if blob[:4] == ZSTD_MAGIC:
        return _unpack_zstd(blob)
    if blob[:1] in (b"{", b"["):  # JSON handed on already unpacked (no zlib header starts so)
        return blob
    if len(blob) >= 6 and blob[1] & 0x20:  # FDICT: a dictionary id follows the header
        zdict = _KNOWN.get(int.from_bytes(blob[2:6], "big"))
        if zdict is None:
            raise ValueError("compressed with an unknown preset dictionary")
        unpacker = zlib.decompressobj(zdict=zdict)
        data = unpacker.decompress(blob)
        if not unpacker.eof:
            raise zlib.error("incomplete compressed data")
        return data
    return zlib.decompress(blob)


def is_preset(blob: bytes) -> bool:
    """True for a blob `pack` made (zlib with a preset dictionary errkb knows)."""
    return (
        len(blob) >= 6
        and blob[0] & 0x0F == 8
        and bool(blob[1] & 0x20)
        and int.from_bytes(blob[2:6], "big") in _KNOWN
    )


# --- trained dictionaries (zstd) ---

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DICT_BYTES = 112_640  # zstd's default dictionary size: larger ones gained little on entry docs
MIN_SAMPLES = 64  # fewer blobs than this are not worth a dictionary (zstd alone packs them)
ZSTD_LEVEL = 9  # higher levels gained a few percent for several times the time


class UnknownDictionary(LookupError):
    """A blob names a trained dictionary that this process has not registered."""

    def __init__(self, dict_id: int) -> None:
        super().__init__(f"compressed with trained dictionary {dict_id}, which is not loaded")
        self.dict_id = dict_id


@dataclass(frozen=True)
class Trained:
    """A trained dictionary: its id (written into every frame made with it) and its bytes."""

    id: int
    data: bytes
    samples: int  # how many blobs it was trained on


def train(samples: list[bytes], size: int = DICT_BYTES) -> Trained | None:
    """A dictionary trained on `samples`, or None when they are too few or too small for one."""
    if len(samples) < MIN_SAMPLES:
        return None
    material: list[bytes | bytearray | memoryview] = list(samples)
    try:
        trained = zstandard.train_dictionary(size, material)
    except zstandard.ZstdError:  # too little material to learn from
        return None
    return Trained(trained.dict_id(), trained.as_bytes(), len(samples))


class Packer:
    """Compresses blobs with one trained dictionary (or none); one per thread."""

    def __init__(self, trained: Trained | None, level: int = ZSTD_LEVEL) -> None:
        self.dict_id = trained.id if trained is not None else 0
        options = dict(level=level, write_checksum=False, write_content_size=True)
        if trained is None:
            self._zstd = zstandard.ZstdCompressor(**options)  # type: ignore[arg-type]
        else:
            zdict = zstandard.ZstdCompressionDict(trained.data)
            self._zstd = zstandard.ZstdCompressor(dict_data=zdict, **options)  # type: ignore[arg-type]

    def pack(self, data: bytes) -> bytes:
        """`data` as one zstd frame naming this packer's dictionary."""
        return self._zstd.compress(data)


_dictionaries: dict[int, zstandard.ZstdCompressionDict] = {}
_local = threading.local()  # a decompressor per thread and dictionary: they are not shareable


def register(dict_id: int, data: bytes) -> None:
    """Make a stored dictionary known to `unpack` in this process."""
    if dict_id not in _dictionaries:
        zdict = zstandard.ZstdCompressionDict(data)
        if zdict.dict_id() != dict_id:
            raise ValueError(f"dictionary {dict_id} does not hold that id")
        _dictionaries[dict_id] = zdict


def is_known(dict_id: int) -> bool:
    """True when a trained dictionary is registered in this process (0, none, always is)."""
    return dict_id == 0 or dict_id in _dictionaries


def dictionary_of(blob: bytes) -> int:
    """The trained dictionary a blob needs (0: none)."""
    if blob[:4] != ZSTD_MAGIC:
        return 0
    return int(zstandard.get_frame_parameters(blob).dict_id)


def _unpack_zstd(blob: bytes) -> bytes:
    dict_id = dictionary_of(blob)
    cache: dict[int, zstandard.ZstdDecompressor] = _local.__dict__.setdefault("by_dict", {})
    unpacker = cache.get(dict_id)
    if unpacker is None:
        if dict_id == 0:
            unpacker = zstandard.ZstdDecompressor()
        elif dict_id in _dictionaries:
            unpacker = zstandard.ZstdDecompressor(dict_data=_dictionaries[dict_id])
        else:
            raise UnknownDictionary(dict_id)
        cache[dict_id] = unpacker
    return unpacker.decompress(blob)
