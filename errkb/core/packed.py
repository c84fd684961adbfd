"""Compressed JSON blobs: the parse cache's results and the site bodies' code.

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
"""

from __future__ import annotations

import zlib

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
    """The bytes `pack` (or plain `zlib.compress`) was given."""
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
