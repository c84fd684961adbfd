"""The code a parse process runs: kept apart so that worker processes import only the pure core."""

from __future__ import annotations

from ingest.extract import extract_file
from ingest.filecache import encode_result
from ingest.records import ExtractConfig, FileResult


def extract_chunk(
    chunk: list[tuple[str, bytes]], config: ExtractConfig
) -> list[tuple[FileResult, bytes]]:
    """Extract each (path, bytes) and encode the result for the file cache, in the worker."""
    out = []
    for path, data in chunk:
        result = extract_file(data, path, config)
        out.append((result, encode_result(result)))
    return out
