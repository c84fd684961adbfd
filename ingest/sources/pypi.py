"""PyPI releases: fetched by URL from the index into a cache folder, read from the archive.

The wheel or sdist is never built, installed or imported (see `download`); its `.py` members
are read straight from the zip or tar file and mapped to repo paths with the repo's prefix.
"""

from __future__ import annotations

import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from errkb.core.declared import Declared
from errkb.core.records import SnapshotKind
from errkb.ingest.sources.base import (
    KNOWN_BATCH,
    KnownFiles,
    SnapshotInfo,
    SourceFile,
    blob_sha,
    stored_digest,
    version_sort_key,
)
from errkb.ingest.sources.download import cached_archive, download
from errkb.ingest.sources.index import ARCHIVE_SUFFIXES, PYPI_JSON
from errkb.ingest.sources.requirements import from_metadata

__all__ = ["ARCHIVE_SUFFIXES", "PypiSource", "archive_files", "cached_archive", "repo_path"]

_PLAIN = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class PypiSource:
    """One release `name==version`, downloaded once into `cache_dir`."""

    kind: SnapshotKind = "pypi"

    def __init__(
        self,
        name: str,
        version: str,
        *,
        cache_dir: Path,
        path_prefix: str = "",
        web_url: str | None = None,
        tag_pattern: str = "v{version}",
        max_bytes: int = 2_000_000,
        archive: Path | None = None,
        fetch: Callable[[], Path] | None = None,
        index_url: str = PYPI_JSON,
    ) -> None:
        self.name, self.version = name, version
        self.cache_dir = Path(cache_dir)
        self.path_prefix = path_prefix
        self.web_url = web_url
        self.tag_pattern = tag_pattern
        self.max_bytes = max_bytes
        self._archive = archive
        self._fetch = fetch  # a download already under way (see download.Downloads)
        self.index_url = index_url
        self._members: list[zipfile.ZipInfo] | None = None

    @property
    def archive(self) -> Path:
        """The wheel or sdist, downloaded on first use."""
        if self._archive is None:
            if self._fetch is not None:
                self._archive = self._fetch()
            else:
                self._archive = download(
                    self.name, self.version, self.cache_dir, index_url=self.index_url
                )
        return self._archive

    def snapshot(self) -> SnapshotInfo:
        """The release's identity; its date is the newest member time in the archive."""
        link_base = None
        if self.web_url:
            tag = self.tag_pattern.format(version=self.version)
            link_base = f"{self.web_url.rstrip('/')}/blob/{tag}/"
        return SnapshotInfo(
            label=self.version,
            kind=self.kind,
            ref=f"{self.name}=={self.version}",
            commit=self.version,
            date=newest_member_time(self.archive, self._zip_members()),
            link_base=link_base,
            sort_key=version_sort_key(self.version),
            requirements=archive_requirements(self.archive, self._zip_members()),
        )

    def files(self, known: KnownFiles | None = None) -> Iterator[SourceFile]:
        """Every `.py` member, mapped to its repo path; members `known` answers for are not
        inflated."""
        yield from archive_files(
            self.archive, self.path_prefix, self.max_bytes, known, self._zip_members()
        )

    def close(self) -> None:
        """Drop the archive's member list."""
        self._members = None

    def _zip_members(self) -> list[zipfile.ZipInfo] | None:
        """The archive's central directory, read once (None for a tar archive)."""
        if self._members is None and self.archive.suffix in (".whl", ".zip"):
            self._members = zip_members(self.archive)
        return self._members


def repo_path(member: str, prefix: str, *, sdist: bool) -> str | None:
    """The repo path of an archive member, or None when the name is unsafe."""
    parts = PurePosixPath(member).parts
    if sdist:
        parts = parts[1:]  # "sglang-0.5.18/sglang/x.py" -> "sglang/x.py"
    if not parts or any(p in ("..", "") for p in parts) or member.startswith("/"):
        return None
    return prefix + "/".join(parts)


def archive_files(
    archive: Path,
    prefix: str,
    max_bytes: int,
    known: KnownFiles | None = None,
    members: list[zipfile.ZipInfo] | None = None,
) -> Iterator[SourceFile]:
    """The `.py` members of a wheel/zip or tar sdist, read without extracting to disk.

    A zip's members are identified by their compressed streams (`stored_digest`) before they
    are inflated, and those `known` answers for are not inflated at all. `members` is the zip's
    central directory when the caller has read it already (`zip_members`).
    """
    if archive.suffix in (".whl", ".zip"):
        yield from _zip_files(archive, prefix, max_bytes, known, members or zip_members(archive))
        return
    with tarfile.open(archive, mode="r:*") as tf:
        for member in sorted(tf.getmembers(), key=lambda m: m.name):
            if not member.name.endswith(".py"):
                continue
            path = repo_path(member.name, prefix, sdist=True)
            if path is None or not member.isfile():  # links may point anywhere: never followed
                yield SourceFile(member.name, "", b"", skip="unsafe")
            elif member.size > max_bytes:
                yield SourceFile(path, "", b"", skip="too_large")
            else:
                handle = tf.extractfile(member)
                data = handle.read() if handle else b""
                yield SourceFile(path, blob_sha(data), data)


def archive_requirements(
    archive: Path, members: list[zipfile.ZipInfo] | None = None
) -> tuple[Declared, ...]:
    """The release's declared requirements: the wheel's `*.dist-info/METADATA`, or the sdist's
    top `PKG-INFO`; none when the archive has neither."""
    if archive.suffix in (".whl", ".zip"):
        found = [
            m
            for m in members or zip_members(archive)
            if m.filename.count("/") == 1 and m.filename.endswith(".dist-info/METADATA")
        ]
        if not found:
            return ()
        with zipfile.ZipFile(archive) as zf:
            return from_metadata(zf.read(found[0]).decode("utf-8", "replace"))
    with tarfile.open(archive, mode="r:*") as tf:
        for member in tf:
            if member.name.count("/") == 1 and member.name.endswith("/PKG-INFO"):
                handle = tf.extractfile(member)
                return from_metadata(handle.read().decode("utf-8", "replace")) if handle else ()
    return ()


def zip_members(archive: Path) -> list[zipfile.ZipInfo]:
    """A zip's members, from its central directory."""
    with zipfile.ZipFile(archive) as zf:
        return zf.infolist()


_Packed = tuple[str, zipfile.ZipInfo, bytes, str]  # path, member, compressed stream, digest


def _zip_files(
    archive: Path,
    prefix: str,
    max_bytes: int,
    known: KnownFiles | None,
    members: list[zipfile.ZipInfo],
) -> Iterator[SourceFile]:
    """The `.py` members of a zip, in name order, asking `known` about them a batch at a time."""
    sdist = archive.suffix == ".zip"
    infos = sorted(
        (i for i in members if not i.is_dir() and i.filename.endswith(".py")),
        key=lambda i: i.filename,
    )
    with open(archive, "rb") as raw:
        for start in range(0, len(infos), KNOWN_BATCH):
            batch: list[SourceFile | _Packed] = []
            for info in infos[start : start + KNOWN_BATCH]:
                path = repo_path(info.filename, prefix, sdist=sdist)
                if path is None:
                    batch.append(SourceFile(info.filename, "", b"", skip="unsafe"))
                elif info.file_size > max_bytes:
                    batch.append(SourceFile(path, "", b"", skip="too_large"))
                elif info.flag_bits & 1 or info.compress_type not in _PLAIN:
                    # Encrypted, or a rarer compression: zipfile's own reader, no digest.
                    with zipfile.ZipFile(archive) as zf:
                        data = zf.read(info)
                    batch.append(SourceFile(path, blob_sha(data), data))
                else:
                    packed = _packed(raw, info)
                    digest = stored_digest(info.compress_type, info.file_size, info.CRC, packed)
                    batch.append((path, info, packed, digest))
            asked = [(m[0], m[3]) for m in batch if isinstance(m, tuple)]
            hashes = known(asked) if known is not None and asked else {}
            for m in batch:
                if isinstance(m, SourceFile):
                    yield m
                    continue
                path, info, packed, digest = m
                if digest in hashes:
                    yield SourceFile(path, hashes[digest], b"", stored=digest, known=True)
                else:
                    data = _inflated(info, packed)
                    yield SourceFile(path, blob_sha(data), data, stored=digest)


def _packed(raw: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """A member's stream as stored, read straight from the archive past its local header."""
    raw.seek(info.header_offset)
    header = raw.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    raw.seek(name_len + extra_len, 1)
    return raw.read(info.compress_size)


def _inflated(info: zipfile.ZipInfo, packed: bytes) -> bytes:
    """A stored or deflated member's bytes, size- and CRC-checked (a third of `ZipFile.read`'s
    time goes to its stream machinery). Inflating stops one byte past the size the archive
    states, so a member that inflates to far more (a zip bomb) costs no more than that."""
    if info.compress_type == zipfile.ZIP_DEFLATED:
        data = zlib.decompressobj(-15).decompress(packed, info.file_size + 1)
    else:
        data = packed
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"bad CRC or size for {info.filename}")
    return data


def newest_member_time(
    archive: Path, members: list[zipfile.ZipInfo] | None = None
) -> datetime | None:
    """The newest modification time among the archive's members (UTC)."""
    if archive.suffix in (".whl", ".zip"):
        stamps = [i.date_time for i in (members or zip_members(archive))]
        if not stamps:
            return None
        return datetime(*max(stamps), tzinfo=UTC)
    with tarfile.open(archive, mode="r:*") as tf:
        times = [m.mtime for m in tf.getmembers()]
    return datetime.fromtimestamp(max(times), tz=UTC) if times else None
