"""Snapshot sources: git commits, PyPI releases and local folders, each yielding repo-path files."""

from errkb.ingest.sources.base import SnapshotInfo, Source, SourceFile, blob_sha

__all__ = ["SnapshotInfo", "Source", "SourceFile", "blob_sha"]
