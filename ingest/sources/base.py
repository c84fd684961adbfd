"""What every snapshot source yields: the snapshot's identity and its `.py` files by repo path.

Sources are the only part of the ingester that touches git, PyPI or the file system; the pipeline
sees nothing but these records, so one pipeline serves every kind of snapshot.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from packaging.version import InvalidVersion, Version

from errkb.core.declared import Declared
from errkb.core.records import SnapshotKind


@dataclass(frozen=True)
class SnapshotInfo:
    """Identity of one snapshot; (repo, kind, commit) is unique in the database."""

    label: str  # "0.5.18", "main@0132848349", a folder label
    kind: SnapshotKind
    ref: str | None  # the ref or requirement as the user gave it
    commit: str  # full SHA, version, or folder digest
    date: datetime | None
    link_base: str | None  # ".../blob/v0.5.18/"; a site links to link_base + path + "#L<line>"
    sort_key: str  # orders the snapshots of a repo
    # What the snapshot declares it needs (`Requires-Dist`, pyproject.toml): the import entries'
    # distributions, version ranges and extras.
    requirements: tuple[Declared, ...] = ()


@dataclass(frozen=True)
class SourceFile:
    """One `.py` file of a snapshot; `skip` names why it was not read (then `data` is empty).

    `stored` identifies the file's bytes as the source stores them, where that is cheaper to know
    than the bytes: an archive member's compressed stream (`stored_digest`), a git blob's SHA.
    `known` marks a file the caller already held the result of (see `KnownFiles`): it was not
    read, and its `data` is empty.
    """

    path: str  # repo path, prefix applied
    content_hash: str  # git blob SHA-1 of the bytes
    data: bytes
    skip: str | None = None  # "too_large" | "unsafe"
    stored: str | None = None
    known: bool = False


KNOWN_BATCH = 400  # files per question to `KnownFiles`
KnownFiles = Callable[[Sequence[tuple[str, str]]], Mapping[str, str]]
"""Asked by a source with (path, stored digest) of files it is about to read: the content hash of
each whose result the caller already holds, by stored digest. The source yields those files
unread (`SourceFile.known`); the caller learns the digests of the others from `SourceFile.stored`.
"""


class Source(Protocol):
    """A snapshot source: its identity first (cheap where possible), then its files."""

    def snapshot(self) -> SnapshotInfo:
        """The snapshot's label, commit, date and link base."""
        ...

    def files(self, known: KnownFiles | None = None) -> Iterator[SourceFile]:
        """Every `.py` file of the snapshot, in a stable order; a source that can identify its
        files before reading them asks `known` which it may leave unread."""
        ...

    def close(self) -> None:
        """Release processes and handles held by the source."""
        ...


def blob_sha(data: bytes) -> str:
    """The git blob SHA-1 of some bytes, so PyPI and folder files share the cache with git."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def stored_digest(method: int, size: int, crc: int, packed: bytes) -> str:
    """The identity of a compressed archive member: its compression method, size, CRC and
    compressed stream. Inflating is deterministic, so equal digests mean equal bytes (and
    content hashes), while hashing the compressed stream costs a fraction of inflating it."""
    h = hashlib.sha1(b"%d %d %d\0" % (method, size, crc), usedforsecurity=False)
    h.update(packed)
    return h.hexdigest()


def version_sort_key(version: str) -> str:
    """A string that sorts like packaging.version: zero-padded release, pre, post and dev parts."""
    try:
        v = Version(version)
    except InvalidVersion:
        return "~" + version  # unparsable versions sort after every real one
    release = (v.release + (0, 0, 0, 0))[:4] if len(v.release) <= 4 else v.release
    parts = [f"{v.epoch:04d}", *(f"{n:08d}" for n in release)]
    if v.pre is not None:
        phase = f"1{ {'a': 0, 'b': 1, 'rc': 2}[v.pre[0]] }{v.pre[1]:06d}"
    elif v.dev is not None and v.post is None:
        phase = "0" + "0" * 7  # 1.0.dev1 sorts before 1.0a1
    else:
        phase = "2" + "0" * 7
    post = f"{(v.post + 1) if v.post is not None else 0:06d}"
    dev = f"{v.dev if v.dev is not None else 999999:06d}"
    return ".".join(parts) + f"-{phase}-{post}-{dev}"


def date_sort_key(date: datetime | None) -> str:
    """A sortable UTC timestamp for commits and folders (naive dates are taken as UTC)."""
    if date is None:
        return ""
    if date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    return date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
