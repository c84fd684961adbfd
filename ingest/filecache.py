"""How per-file results are stored in the file cache: compressed FileResult JSON.

Separate from `ingest.store` so that parse processes can encode without importing SQLAlchemy.
"""

from __future__ import annotations

import zlib

from errkb.core.records import FILE_RESULT, ExtractConfig, FileResult


def encode_result(result: FileResult) -> bytes:
    """A FileResult as compressed JSON."""
    return zlib.compress(FILE_RESULT.dump_json(result), 1)


def decode_result(blob: bytes) -> FileResult:
    """The FileResult stored by `encode_result`."""
    return FILE_RESULT.validate_json(zlib.decompress(blob))


def extractor_key(version: str, config: ExtractConfig) -> str:
    """The cache key part naming the extractor: its version plus the config digest."""
    return f"{version}:{config.digest}"[:64]
