"""How per-file results are stored in the file cache: compressed FileResult JSON.

Separate from `ingest.store` so that parse processes can encode without importing SQLAlchemy.
"""

from __future__ import annotations

from errkb.core.packed import pack, unpack
from errkb.core.records import FILE_RESULT, ExtractConfig, FileResult


def encode_result(result: FileResult) -> bytes:
    """A FileResult as compressed JSON (`errkb.core.packed`)."""
    return pack(FILE_RESULT.dump_json(result))


def decode_result(blob: bytes) -> FileResult:
    """The FileResult stored by `encode_result`."""
    return FILE_RESULT.validate_json(unpack(blob))


def extractor_key(version: str, config: ExtractConfig) -> str:
    """The cache key part naming the extractor: its version plus the config digest."""
    return f"{version}:{config.digest}"[:64]
